/**
 * The agent's writes and removals against a concurrent renamer (D14): another process swaps a
 * directory under the root for a symlink to a directory outside it and back, as fast as it can,
 * while the agent writes and removes files below that directory. Nothing may land outside the
 * root, and nothing outside it may be removed; writes may fail meanwhile (refused, or the
 * directory gone for a moment), and some must succeed.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { FileStore, sha256 } from '../../../src/operators/nodeconfig/file-store.ts'

/** Writes and removals the agent attempts while the renamer runs. */
const ATTEMPTS = 2_000

let base = ''
after(() => rm(base, { recursive: true, force: true }))

/** The renamer: swaps `root/d` for a symlink to `outside` and back until stdin closes. */
const RENAMER = `
const fs = require('node:fs')
const [root, outside] = process.argv.slice(1)
const d = root + '/d', held = root + '/d-held'
let stop = false
const cell = new Int32Array(new SharedArrayBuffer(4))
const hold = () => Atomics.wait(cell, 0, 0, Math.random() * 2)
process.stdin.on('end', () => { stop = true }).resume()
const step = () => {
  for (let i = 0; i < 20; i++) {
    // Each state (directory, symlink) holds for 0 to 2 ms, about as long as a write's fsync, so
    // either can meet any step of a write.
    try { fs.renameSync(d, held); fs.symlinkSync(outside, d); hold(); fs.unlinkSync(d); fs.renameSync(held, d); hold() } catch {}
  }
  if (!stop) setImmediate(step)
}
process.stdout.write('ready\\n')
step()
`

test('D14: a concurrent renamer swapping a directory for a symlink to outside gets no write outside the root and no removal there', async (t) => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-race-')))
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  await mkdir(join(root, 'd'), { recursive: true })
  await mkdir(outside)
  for (let i = 0; i < ATTEMPTS; i++) await writeFile(join(outside, `victim-${i}`), 'not the agent’s')
  const renamer = spawn(process.execPath, ['-e', RENAMER, root, outside], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  await new Promise((ready) => renamer.stdout.once('data', ready))
  const store = new FileStore(root)
  let written = 0
  let removed = 0
  try {
    for (let i = 0; i < ATTEMPTS; i++) {
      const content = `file ${i}\n`
      await store.ensure(`d/file-${i}`, content, 0o644, sha256(content)).then(
        () => written++,
        () => {},
      )
      await store.remove(`d/victim-${i}`).then(
        (gone) => void (gone && removed++),
        () => {},
      )
    }
  } finally {
    renamer.stdin.end()
    await new Promise((exited) => renamer.once('exit', exited))
  }
  const landed = (await readdir(outside)).filter((n) => !n.startsWith('victim-'))
  assert.deepEqual(landed, [], `${landed.length} of ${ATTEMPTS} writes landed outside the root`)
  const victims = (await readdir(outside)).filter((n) => n.startsWith('victim-')).length
  assert.equal(victims, ATTEMPTS, `${ATTEMPTS - victims} files outside the root were removed`)
  t.diagnostic(`${written} of ${ATTEMPTS} writes succeeded during the race; none landed outside`)
  assert.ok(written > 0, 'some writes succeeded while the renamer ran')
  assert.equal(removed, 0, 'no victim was ever inside the root')
})
