import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { FileStore, RECORD_PATH, sha256 } from '../../../src/operators/nodeconfig/file-store.ts'

const dirs: string[] = []
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function tempDir(): Promise<string> {
  const d = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-files-')))
  dirs.push(d)
  return d
}
const ensure = (s: FileStore, path: string, content: string, mode = 0o644) =>
  s.ensure(path, content, mode, sha256(content))

test('ensure creates parents and the file with exactly the mode asked for, whatever the umask', async () => {
  const root = join(await tempDir(), 'root')
  const store = new FileStore(root)
  const old = process.umask(0o077)
  try {
    assert.equal(await ensure(store, 'etc/app/a.conf', 'hello\n', 0o644), 'created')
    assert.equal(await ensure(store, 'etc/app/secret', 's3', 0o600), 'created')
  } finally {
    process.umask(old)
  }
  assert.equal(await readFile(join(root, 'etc/app/a.conf'), 'utf8'), 'hello\n')
  assert.equal((await stat(join(root, 'etc/app/a.conf'))).mode & 0o777, 0o644)
  assert.equal((await stat(join(root, 'etc/app/secret'))).mode & 0o777, 0o600)
  assert.deepEqual(
    (await readdir(join(root, 'etc/app'))).sort(),
    ['a.conf', 'secret'],
    'no temporary file left',
  )
})

test('a file already right is not rewritten (same inode, same mtime); content or mode drift replaces it', async () => {
  const root = await tempDir()
  const store = new FileStore(root)
  const file = join(root, 'a.conf')
  await ensure(store, 'a.conf', 'v1')
  const before = await stat(file)
  await new Promise((r) => setImmediate(r))
  assert.equal(await ensure(store, 'a.conf', 'v1'), 'unchanged')
  const same = await stat(file)
  assert.equal(same.ino, before.ino)
  assert.equal(same.mtimeMs, before.mtimeMs)

  await writeFile(file, 'edited by hand')
  assert.equal(await ensure(store, 'a.conf', 'v1'), 'replaced')
  assert.equal(await readFile(file, 'utf8'), 'v1')
  assert.notEqual((await stat(file)).ino, before.ino, 'replaced by rename, not written in place')

  assert.equal(await ensure(store, 'a.conf', 'v1', 0o640), 'replaced', 'mode drift')
  assert.equal((await stat(file)).mode & 0o777, 0o640)

  await rm(file)
  assert.equal(await ensure(store, 'a.conf', 'v1', 0o640), 'created', 'deleted by hand → back')
})

test('a reader never sees a partial file while it is being replaced', async () => {
  const root = await tempDir()
  const target = join(root, 'big')
  const size = 4 * 1024 * 1024
  const versions = [Buffer.alloc(size, 'a'), Buffer.alloc(size, 'b')]
  const store = new FileStore(root)
  const write = (v: Buffer) => ensure(store, 'big', v.toString('latin1'))
  await write(versions[0]!)
  let writing = true
  let reads = 0
  const reader = (async () => {
    while (writing) {
      const got = await readFile(target)
      reads++
      assert.equal(got.length, size, 'never a truncated file')
      assert.ok(got.equals(versions[0]!) || got.equals(versions[1]!), 'never a mix')
    }
  })()
  for (let i = 1; i <= 20; i++) await write(versions[i % 2]!)
  writing = false
  await reader
  assert.ok(reads > 0)
  assert.deepEqual(await readdir(root), ['big'])
})

test('a symlink at the target is replaced, never followed; a symlinked parent leading out is refused', async () => {
  const base = await tempDir()
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  await mkdir(root)
  await mkdir(outside)
  await writeFile(join(outside, 'victim'), 'original')
  await symlink(join(outside, 'victim'), join(root, 'link.conf'))
  await symlink(outside, join(root, 'escape'))
  const store = new FileStore(root)

  assert.equal(await ensure(store, 'link.conf', 'mine'), 'replaced')
  assert.ok((await lstat(join(root, 'link.conf'))).isFile())
  assert.equal(await readFile(join(outside, 'victim'), 'utf8'), 'original')

  await assert.rejects(ensure(store, 'escape/victim', 'pwned'), {
    code: 'EDGEOP_ERR_FILE',
    message: /outside the root/,
  })
  await assert.rejects(ensure(store, 'escape/new/file', 'pwned'), /outside the root/)
  await assert.rejects(store.remove('escape/victim'), /outside the root/)
  assert.equal(await readFile(join(outside, 'victim'), 'utf8'), 'original')
  assert.deepEqual(await readdir(outside), ['victim'])
})

test('a FIFO or other special file at the target is replaced without being opened (a read would block)', async () => {
  const root = await tempDir()
  execFileSync('mkfifo', [join(root, 'pipe')])
  const store = new FileStore(root)
  assert.equal(await ensure(store, 'pipe', ''), 'replaced') // size 0 and mode could even match
  assert.ok((await lstat(join(root, 'pipe'))).isFile())
})

test('remove deletes the file and the directories it leaves empty, never the root or a directory', async () => {
  const root = await tempDir()
  const store = new FileStore(root)
  await ensure(store, 'a/b/c/one', '1')
  await ensure(store, 'a/keep', 'k')
  assert.equal(await store.remove('a/b/c/one'), true)
  assert.deepEqual(await readdir(join(root, 'a')), ['keep'])
  assert.equal(await store.remove('a/b/c/one'), false, 'already gone')
  assert.equal(await store.remove('a/keep'), true)
  assert.deepEqual(await readdir(root), [])
  await mkdir(join(root, 'd'))
  await assert.rejects(store.remove('d'), /is a directory/)
  await mkdir(join(root, 'dir-in-the-way'))
  await assert.rejects(ensure(store, 'dir-in-the-way', 'x'), { code: 'EDGEOP_ERR_FILE' })
})

test('the ownership record round-trips atomically with mode 0600; a corrupt one is an error, a missing one empty', async () => {
  const root = await tempDir()
  const store = new FileStore(root)
  assert.deepEqual(await store.loadRecord(), { version: 1, files: {} })
  const record = {
    version: 1 as const,
    files: {
      'z.conf': { uid: 'u2', name: 'two', sha256: sha256('z'), mode: '0644' },
      'a.conf': { uid: 'u1', name: 'one', sha256: sha256('a'), mode: '0600' },
    },
  }
  await store.saveRecord(record)
  assert.deepEqual(await store.loadRecord(), record)
  assert.equal((await stat(join(root, RECORD_PATH))).mode & 0o777, 0o600)
  assert.deepEqual(Object.keys(JSON.parse(await readFile(join(root, RECORD_PATH), 'utf8')).files), [
    'a.conf',
    'z.conf',
  ])
  await writeFile(join(root, RECORD_PATH), '{"version":1,"files":')
  await assert.rejects(store.loadRecord(), { code: 'EDGEOP_ERR_FILE', message: /not JSON/ })
  await writeFile(join(root, RECORD_PATH), '{"version":2,"files":{}}')
  await assert.rejects(store.loadRecord(), /malformed/)
})

test('an unusable root fails with the reason, naming no content', async () => {
  const base = await tempDir()
  await writeFile(join(base, 'a-file'), '')
  const store = new FileStore(join(base, 'a-file', 'root'))
  await assert.rejects(store.open(), { code: 'EDGEOP_ERR_FILE', message: /root .* is unusable: ENOTDIR/ })
  await assert.rejects(
    ensure(store, 'x', 'top secret content'),
    (err: Error) => !err.message.includes('top secret'),
  )
  const rootOk = await tempDir()
  await writeFile(join(rootOk, '.edgeop'), 'a file where the record directory goes')
  await assert.rejects(
    new FileStore(rootOk).saveRecord({ version: 1, files: {} }),
    /cannot write the ownership record/,
  )
})

test('a FIFO, a symlink or a directory at the ownership record is an error naming the record, never a hang', async () => {
  for (const kind of ['fifo', 'symlink', 'dir'] as const) {
    const root = await tempDir()
    await mkdir(join(root, '.edgeop'))
    const file = join(root, RECORD_PATH)
    if (kind === 'fifo') execFileSync('mkfifo', [file])
    else if (kind === 'dir') await mkdir(file)
    else {
      await writeFile(join(root, 'elsewhere.json'), '{"version":1,"files":{}}')
      await symlink(join(root, 'elsewhere.json'), file)
    }
    await assert.rejects(new FileStore(root).loadRecord(), {
      code: 'EDGEOP_ERR_FILE',
      message:
        /^ownership record \.edgeop\/owners\.json: \.edgeop\/owners\.json is (a FIFO|a symlink|a directory), not a regular file$/,
    })
  }
  const symlinked = await tempDir()
  await mkdir(join(symlinked, 'real'))
  await symlink(join(symlinked, 'real'), join(symlinked, '.edgeop'))
  await assert.rejects(new FileStore(symlinked).loadRecord(), /a parent directory is a symlink/)
})
