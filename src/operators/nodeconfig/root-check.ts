/**
 * @module root-check — whether a directory can serve as the agent's root, decided at start-up rather than at the first reconcile.
 *
 * The agent writes whatever paths NodeConfigs name under its root, and removes what it wrote when they
 * go away. A root that is, or lies inside, a system directory would let anyone who can create a
 * NodeConfig replace the node's binaries or configuration; a root that is a file or read-only would
 * only fail at the first reconcile, after the agent has reported itself started.
 */
import { randomBytes } from 'node:crypto'
import type { Stats } from 'node:fs'
import { mkdir, open, realpath, rm, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { errorMessage, systemDirectoryOf } from '../../core/index.ts'
import { DIR_MODE, TEMP_PREFIX } from './file-store.ts'

/** Longest part of the given path repeated in a message. */
const MAX_SHOWN_CHARS = 128

/** Why a root was refused: `system` can be overridden deliberately; `unusable` cannot. */
export interface RootProblem {
  kind: 'system' | 'unusable'
  /** One line, without the flag name, e.g. `"/" is a system directory`. */
  message: string
}

/**
 * Checks `root` as the agent would use it, and creates it (mode {@link DIR_MODE}) when missing, as
 * the agent's first reconcile would. Refused, in this order: an empty path; a system directory (see
 * `systemDirectoryOf` of edgeop/core) as written, then again with the deepest
 * existing part resolved through symlinks — both before anything is created — unless
 * `allowSystemRoot`; a path whose existing part is not a directory; one that cannot be created; one
 * where a file cannot be created and removed (read-only filesystem, no permission). The probe file
 * uses the agent's reserved temporary prefix, so no NodeConfig can own it.
 *
 * Returns undefined when the root is usable.
 *
 * @example
 * const problem = await checkAgentRoot('/var/lib/edgeop/files')
 * if (problem) exit(`--root: ${problem.message}`)
 */
export async function checkAgentRoot(
  root: string,
  options: { allowSystemRoot?: boolean } = {},
): Promise<RootProblem | undefined> {
  const unusable = (message: string): RootProblem => ({ kind: 'unusable', message })
  if (root === '') return unusable('must not be empty')
  const shown = JSON.stringify(root.length > MAX_SHOWN_CHARS ? `${root.slice(0, MAX_SHOWN_CHARS)}…` : root)
  const system = (dir: string): RootProblem | undefined => {
    const found = options.allowSystemRoot ? undefined : systemDirectoryOf(dir)
    if (found === undefined) return undefined
    const where = found === dir ? 'is a system directory' : `is inside ${found}, a system directory`
    const via = dir === root ? '' : ` (it resolves to ${dir})`
    return {
      kind: 'system',
      message: `${shown}${via} ${where}: a NodeConfig could then replace the node's own files; use a directory of the agent's own`,
    }
  }
  const before = system(resolve(root))
  if (before) return before
  // The deepest part of the path that exists, resolved through symlinks, decides where a new root
  // would land: check that before creating anything.
  const missing: string[] = []
  let existing = resolve(root)
  let st: Stats
  for (;;) {
    try {
      st = await stat(existing)
      break
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || existing === dirname(existing))
        return unusable(`${shown}: ${errorMessage(err)}`)
      missing.unshift(basename(existing))
      existing = dirname(existing)
    }
  }
  if (!st.isDirectory())
    return unusable(
      missing.length === 0
        ? `${shown} exists and is not a directory`
        : `${shown}: ${existing} is not a directory`,
    )
  let real: string
  try {
    real = await realpath(existing)
  } catch (err) {
    return unusable(`${shown}: ${errorMessage(err)}`)
  }
  const after = system(join(real, ...missing))
  if (after) return after
  // One level at a time: `mkdir(…, { recursive: true })` never returns on some virtual
  // filesystems (Node 24 under /proc/self), and this loop cannot spin.
  for (const part of missing) {
    real = join(real, part)
    try {
      await mkdir(real, { mode: DIR_MODE })
    } catch (err) {
      return unusable(`${shown} does not exist and cannot be created: ${errorMessage(err)}`)
    }
  }
  const probe = join(real, `${TEMP_PREFIX}probe-${randomBytes(6).toString('hex')}`)
  try {
    await (await open(probe, 'wx', 0o600)).close()
    await rm(probe)
  } catch (err) {
    return unusable(`${shown} is not writable: ${errorMessage(err)}`)
  }
  return undefined
}
