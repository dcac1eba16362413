/**
 * Atomic snapshot writes and the cache-directory lock, on the real filesystem; the lock's
 * refusal is also checked through the binary (exit 2, one line naming the owner's pid).
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { lockCacheDir, SNAPSHOT_LOCK_FILE, writeFileAtomic } from '../../src/cache/snapshot-file.ts'
import { isEdgeopError } from '../../src/core/errors.ts'

let dir = ''
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-snapshot-'))
})
after(() => rm(dir, { recursive: true, force: true }))

test('writeFileAtomic replaces the file by rename and leaves no temporary file', async () => {
  const path = join(dir, 'a.snapshot')
  await writeFileAtomic(path, Buffer.from('one'))
  const first = await stat(path)
  await writeFileAtomic(path, Buffer.from('two'), { mode: 0o640 })
  assert.equal(await readFile(path, 'utf8'), 'two')
  assert.notEqual(
    (await stat(path)).ino,
    first.ino,
    'replaced by a new inode (rename), not rewritten in place',
  )
  assert.deepEqual(await readdir(dir), ['a.snapshot'])
  assert.equal((await stat(path)).mode & 0o777, 0o640)
})

test('a write that fails leaves the previous file whole and removes its temporary file', async () => {
  const sub = join(dir, 'fail')
  await mkdir(sub)
  const path = join(sub, 'b.snapshot')
  await writeFileAtomic(path, Buffer.from('old'))
  // The temporary file cannot be created (its directory is missing, as ENOSPC/EROFS would refuse it).
  await assert.rejects(writeFileAtomic(path, Buffer.from('new'), { tempPrefix: 'missing/' }), /ENOENT/)
  assert.equal(await readFile(path, 'utf8'), 'old')
  // The rename fails (the target is a non-empty directory): the temporary file is removed.
  const target = join(sub, 'dir.snapshot')
  await mkdir(join(target, 'inside'), { recursive: true })
  await assert.rejects(writeFileAtomic(target, Buffer.from('new')))
  assert.deepEqual((await readdir(sub)).sort(), ['b.snapshot', 'dir.snapshot'])
})

test('lockCacheDir: creates the directory and the lock with the pid; release removes it', async () => {
  const d = join(dir, 'lock-1', 'nested')
  const release = await lockCacheDir(d)
  assert.equal(await readFile(join(d, SNAPSHOT_LOCK_FILE), 'utf8'), `${process.pid}\n`)
  await release()
  assert.deepEqual(await readdir(d), [])
})

test('lockCacheDir: a live owner is refused with its pid; a dead owner or garbage is taken over', async () => {
  const d = join(dir, 'lock-2')
  await mkdir(d)
  const lock = join(d, SNAPSHOT_LOCK_FILE)
  await writeFile(lock, `${process.ppid}\n`)
  await assert.rejects(lockCacheDir(d), (err) => {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'))
    assert.match(err.message, new RegExp(`in use by process ${process.ppid}`))
    return true
  })
  assert.equal(await readFile(lock, 'utf8'), `${process.ppid}\n`, 'the owner keeps its lock')
  const dead = spawnSync(process.execPath, ['-e', '']).pid!
  for (const stale of [`${dead}\n`, 'garbage', '', `${process.pid}\n`]) {
    await writeFile(lock, stale)
    const release = await lockCacheDir(d)
    assert.equal(await readFile(lock, 'utf8'), `${process.pid}\n`, `took over ${JSON.stringify(stale)}`)
    await release()
  }
})

test('lockCacheDir: a path that cannot be a directory is one EDGEOP_ERR_FILE naming --cache-dir', async () => {
  const file = join(dir, 'a-file')
  await writeFile(file, 'x')
  await assert.rejects(lockCacheDir(join(file, 'sub')), (err) => {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'))
    assert.match(err.message, /^--cache-dir .*a-file\/sub: cannot be used: /)
    return true
  })
})

test('the binary refuses a cache directory another live process holds: exit 2, one line', async () => {
  const d = join(dir, 'lock-3')
  await mkdir(d)
  await writeFile(join(d, SNAPSHOT_LOCK_FILE), `${process.ppid}\n`)
  const main = resolve(import.meta.dirname, '../../src/main.ts')
  for (const args of [
    ['run', `--cache-dir=${d}`],
    ['agent', '--node-name=n1', `--root=${join(dir, 'root')}`, `--cache-dir=${d}`],
  ]) {
    const out = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [main, ...args, '--kubeconfig=/nonexistent/kubeconfig'],
        { encoding: 'utf8' },
        (err, _o, stderr) => done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr }),
      ),
    )
    assert.equal(out.code, 2, out.stderr)
    assert.equal(
      out.stderr,
      `edgeop: --cache-dir ${d}: in use by process ${process.ppid} (${join(d, SNAPSHOT_LOCK_FILE)}); give each process its own directory\n`,
    )
  }
})
