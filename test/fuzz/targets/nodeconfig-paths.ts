/**
 * @module nodeconfig-paths — fuzz target: the file paths a NodeConfig names, checked (`checkRelativePath`)
 * and then written and removed by the agent's `FileStore` under a scratch root that holds a symlink
 * leading out of it.
 *
 * Answered: an accepted path resolves strictly inside any root (the check's guarantee); `ensure` and
 * `remove` either work inside the root or throw an `EdgeopError` `EDGEOP_ERR_FILE`; nothing ever appears
 * beside the root.
 */
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { FileStore, sha256 } from '../../../src/operators/nodeconfig/file-store.ts'
import { checkRelativePath } from '../../../src/operators/nodeconfig/paths.ts'
import { allowOnly, Finding, type FuzzSession, type FuzzTarget, scratchBase } from '../harness.ts'

/** Roots of every shape the check must hold for: the filesystem root, one with a trailing separator, a deep one. */
const ROOTS = ['/', '/srv/root/', '/var/lib/edgeop/files']
const CONTENT = 'fuzz\n'
const HASH = sha256(CONTENT)

export const nodeconfigPaths: FuzzTarget = {
  name: 'nodeconfig-paths',
  entry: 'checkRelativePath, FileStore.ensure and FileStore.remove under a root with an escaping symlink',
  dictionary: [
    '/', '//', '.', '..', '../', './', '\\', '\u0000', '\n', '.edgeop', '.edgeop-tmp-x', 'out/', 'out/x', 'dir/', 'file/',
    '~', '$HOME', '%2e%2e', '\u2025', '\uff0e\uff0e', '\u202e', 'a'.repeat(255), 'é', '\ud800', 'etc/chrony.conf',
  ], // biome-ignore format: a word list
  maxBytes: 2 * 1024,
  async open(): Promise<FuzzSession> {
    const scratch = await mkdtemp(join(scratchBase(), 'edgeop-fuzz-paths-'))
    const root = join(scratch, 'root')
    const outside = join(scratch, 'outside')
    await mkdir(join(root, 'dir'), { recursive: true })
    await mkdir(outside)
    await symlink(outside, join(root, 'out'))
    const store = new FileStore(root)
    await store.ensure('file', CONTENT, 0o644, HASH)
    return {
      async run(input) {
        await mkdir(join(root, 'dir'), { recursive: true })
        const path = Buffer.from(input).toString('utf8')
        const checked = checkRelativePath(path)
        if (checked.ok) {
          for (const r of ROOTS) {
            const at = resolve(r, path)
            const base = r.endsWith(sep) ? r : r + sep
            if (at === resolve(r) || !at.startsWith(base))
              throw new Finding(
                `checkRelativePath accepted a path that resolves to ${JSON.stringify(at)} from root ${r}`,
              )
          }
        }
        if (path !== 'file' && path !== 'dir' && path !== 'out') {
          try {
            await store.ensure(path, CONTENT, 0o644, HASH)
            await store.remove(path)
          } catch (err) {
            allowOnly(err, ['EDGEOP_ERR_FILE'])
          }
        }
        const escaped = await readdir(outside)
        if (escaped.length) {
          await Promise.all(escaped.map((e) => rm(join(outside, e), { recursive: true, force: true })))
          throw new Finding(`a write left the root: ${JSON.stringify(escaped)} appeared beside it`)
        }
      },
      close: () => rm(scratch, { recursive: true, force: true }),
    }
  },
}
