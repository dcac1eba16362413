/**
 * Atomic snapshot writes and the cache-directory lock, on the real filesystem; the lock's
 * refusal is also checked through the binary (exit 2, one line naming the owner's pid).
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { lockCacheDir, SNAPSHOT_LOCK_FILE, writeFileAtomic } from '../../src/cache/snapshot-file.ts'
import { isEdgeopError } from '../../src/core/errors.ts'

/** What a lock of edgeop's holds for `pid`. */
const lockLine = (pid: number): string => `edgeop cache lock, pid ${pid}\n`

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
  assert.equal(await readFile(join(d, SNAPSHOT_LOCK_FILE), 'utf8'), lockLine(process.pid))
  await release()
  assert.deepEqual(await readdir(d), [])
})

test('lockCacheDir: a live owner is refused with its pid; a dead owner or this pid is taken over', async () => {
  const d = join(dir, 'lock-2')
  await mkdir(d)
  const lock = join(d, SNAPSHOT_LOCK_FILE)
  await writeFile(lock, lockLine(process.ppid))
  await assert.rejects(lockCacheDir(d), (err) => {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'))
    assert.match(err.message, new RegExp(`in use by process ${process.ppid}`))
    return true
  })
  assert.equal(await readFile(lock, 'utf8'), lockLine(process.ppid), 'the owner keeps its lock')
  const dead = spawnSync(process.execPath, ['-e', '']).pid!
  for (const stale of [lockLine(dead), lockLine(process.pid)]) {
    await writeFile(lock, stale)
    const release = await lockCacheDir(d)
    assert.equal(await readFile(lock, 'utf8'), lockLine(process.pid), `took over ${JSON.stringify(stale)}`)
    await release()
  }
})

test('lockCacheDir: a path that cannot be a directory is one EDGEOP_ERR_FILE naming --cache-dir', async () => {
  const file = join(dir, 'a-file')
  await writeFile(file, 'x')
  await assert.rejects(lockCacheDir(join(file, 'sub')), (err) => {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'))
    assert.match(err.message, /^--cache-dir .*a-file\/sub: ".*a-file\/sub": .*a-file is not a directory$/)
    return true
  })
})

test('the binary refuses a cache directory another live process holds: exit 2, one line', async () => {
  const d = join(dir, 'lock-3')
  await mkdir(d)
  await writeFile(join(d, SNAPSHOT_LOCK_FILE), lockLine(process.ppid))
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

/** Runs the binary with `args` (and a kubeconfig that does not exist); its exit code and stderr. */
function binary(args: string[]): Promise<{ code: number; stderr: string }> {
  const main = resolve(import.meta.dirname, '../../src/main.ts')
  return new Promise((done) =>
    execFile(
      process.execPath,
      [main, ...args, '--kubeconfig=/nonexistent/kubeconfig'],
      { encoding: 'utf8', timeout: 30_000 },
      (err, _o, stderr) => done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr }),
    ),
  )
}

test('D10: --cache-dir under /proc (or a symlink to it) is one clear error, not a spin', async () => {
  await symlink('/proc/self', join(dir, 'to-proc'))
  for (const [d, message] of [
    [
      '/proc/edgeop-x',
      /^--cache-dir \/proc\/edgeop-x: "\/proc\/edgeop-x" is inside \/proc, a system directory$/,
    ],
    [
      join(dir, 'to-proc', 'x', 'y'),
      /\(it resolves to \/proc\/[0-9]+\/x\/y\) is inside \/proc, a system directory$/,
    ],
  ] as const) {
    await assert.rejects(lockCacheDir(d), (err) => {
      assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'))
      assert.match(err.message, message)
      return true
    })
  }
  const out = await binary(['run', '--cache-dir=/proc/edgeop-x'])
  assert.equal(out.code, 2, out.stderr)
  assert.equal(
    out.stderr,
    'edgeop: --cache-dir /proc/edgeop-x: "/proc/edgeop-x" is inside /proc, a system directory\n',
  )
})

test("D11: another program's file named lock is neither taken over nor removed", async () => {
  const d = join(dir, 'd11-foreign')
  await mkdir(d)
  await writeFile(join(d, 'lock'), '') // dpkg's lock: empty, no pid
  const release = await lockCacheDir(d)
  await release()
  assert.deepEqual(await readdir(d), ['lock'], 'only edgeop.lock came and went')
  assert.equal(await readFile(join(d, 'lock'), 'utf8'), '')
})

test("D11: an edgeop.lock that is not in edgeop's format, or not a regular file, is refused and left alone", async () => {
  const cases: [string, string | 'fifo' | 'dir' | 'symlink'][] = [
    ['empty', ''],
    ['bare-pid', '12345\n'],
    ['garbage', 'garbage'],
    ['long', `edgeop cache lock, pid 1${'0'.repeat(100)}\n`],
    ['fifo', 'fifo'],
    ['dir', 'dir'],
    ['symlink', 'symlink'],
  ]
  for (const [name, content] of cases) {
    const d = join(dir, `d11-${name}`)
    await mkdir(d)
    const lock = join(d, SNAPSHOT_LOCK_FILE)
    if (content === 'fifo') spawnSync('mkfifo', [lock])
    else if (content === 'dir') await mkdir(lock)
    else if (content === 'symlink') await symlink(join(d, 'elsewhere'), lock)
    else await writeFile(lock, content)
    await assert.rejects(lockCacheDir(d), (err) => {
      assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'), name)
      assert.match(
        err.message,
        /edgeop\.lock is not edgeop's lock \(.*\); remove it or use another directory$/,
        name,
      )
      return true
    })
    const st = await lstat(lock)
    assert.ok(
      content === 'fifo'
        ? st.isFIFO()
        : content === 'dir'
          ? st.isDirectory()
          : content === 'symlink'
            ? st.isSymbolicLink()
            : st.isFile(),
      `${name}: left as it was`,
    )
    if (typeof content === 'string' && !['fifo', 'dir', 'symlink'].includes(content))
      assert.equal(await readFile(lock, 'utf8'), content, name)
    assert.deepEqual((await readdir(d)).sort(), [SNAPSHOT_LOCK_FILE], `${name}: nothing else left`)
  }
})

test('D11: a release after another process took the lock over leaves its lock alone', async () => {
  const d = join(dir, 'd11-release')
  const release = await lockCacheDir(d)
  await writeFile(join(d, SNAPSHOT_LOCK_FILE), lockLine(process.ppid))
  await release()
  assert.equal(await readFile(join(d, SNAPSHOT_LOCK_FILE), 'utf8'), lockLine(process.ppid))
})

test('D11: a system directory as --cache-dir is refused before anything is created', async () => {
  await symlink('/sys', join(dir, 'to-sys'))
  for (const [d, message] of [
    ['/sys/edgeop-x', /"\/sys\/edgeop-x" is inside \/sys, a system directory$/],
    [
      join(dir, 'to-sys', 'edgeop-x'),
      /\(it resolves to \/sys\/edgeop-x\) is inside \/sys, a system directory$/,
    ],
    [join(dir, 'home', '.ssh'), /home\/\.ssh" is a system directory$/],
  ] as const) {
    await assert.rejects(lockCacheDir(d), (err) => {
      assert.ok(isEdgeopError(err, 'EDGEOP_ERR_FILE'), d)
      assert.match(err.message, message, d)
      return true
    })
  }
  await assert.rejects(stat(join(dir, 'home')), /ENOENT/, 'nothing created')
})

test('D11: the agent refuses a --cache-dir equal to, inside or containing --root: exit 2, one line', async () => {
  const root = join(dir, 'd11-root')
  await mkdir(join(dir, 'd11-up'))
  await symlink(root, join(dir, 'd11-root-link'))
  for (const [cache, how, rootArg] of [
    [root, 'is', root],
    [join(root, 'cache'), 'is inside', root],
    [join(dir, 'd11-root-link', 'cache'), 'is inside', root],
    [join(dir, 'd11-up'), 'contains', join(dir, 'd11-up', 'files')],
  ] as const) {
    const out = await binary(['agent', '--node-name=n1', `--root=${rootArg}`, `--cache-dir=${cache}`])
    assert.equal(out.code, 2, out.stderr)
    assert.equal(
      out.stderr,
      `edgeop: --cache-dir ${JSON.stringify(cache)} ${how} --root ${JSON.stringify(rootArg)}: give the cache a directory of its own, apart from the files NodeConfigs write\n`,
    )
    await assert.rejects(stat(join(cache, SNAPSHOT_LOCK_FILE)), /ENOENT/, `${cache}: no lock taken`)
  }
})
