/**
 * @module root-check — whether a directory can serve as the agent's root, decided at start-up rather than at the first reconcile.
 *
 * The agent writes whatever paths NodeConfigs name under its root, and removes what it wrote when they
 * go away. A root that is, or lies inside, a system directory would let anyone who can create a
 * NodeConfig replace the node's binaries or configuration; a root that is a file or read-only would
 * only fail at the first reconcile, after the agent has reported itself started.
 */
import { randomBytes } from 'node:crypto'
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { type DirectoryProblem, ownDirectory, resolveExisting, shownPath } from '../../cache/index.ts'
import { errorMessage } from '../../core/index.ts'
import { DIR_MODE, TEMP_PREFIX } from './file-store.ts'
import { isInside } from './paths.ts'

/** Why a root was refused: `system` can be overridden deliberately; `unusable` cannot. */
export type RootProblem = DirectoryProblem

/**
 * Checks `root` as the agent would use it, and creates it (mode {@link DIR_MODE}) when missing, as
 * the agent's first reconcile would. Refused: what `ownDirectory` (edgeop/cache) refuses — a system
 * directory only unless `allowSystemRoot` — and a root where a file cannot be created and removed
 * (read-only filesystem, no permission). The probe file uses the agent's reserved temporary
 * prefix, so no NodeConfig can own it.
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
  const r = await ownDirectory(root, { allowSystem: options.allowSystemRoot, mode: DIR_MODE })
  if ('problem' in r) {
    const { kind, message } = r.problem
    return kind === 'system'
      ? {
          kind,
          message: `${message}: a NodeConfig could then replace the node's own files; use a directory of the agent's own`,
        }
      : r.problem
  }
  const probe = join(r.real, `${TEMP_PREFIX}probe-${randomBytes(6).toString('hex')}`)
  try {
    await (await open(probe, 'wx', 0o600)).close()
    await rm(probe)
  } catch (err) {
    return { kind: 'unusable', message: `${shownPath(root)} is not writable: ${errorMessage(err)}` }
  }
  return undefined
}

/**
 * Why `cacheDir` cannot serve beside `root`, or undefined: the two must not overlap (real paths,
 * symlinks resolved). A cache directory inside the root would be among the files NodeConfigs
 * write and the agent removes; a root inside the cache directory would put NodeConfig files
 * beside the snapshots and the lock. The message names both flags.
 */
export async function cacheDirProblem(root: string, cacheDir: string): Promise<string | undefined> {
  let r: string
  let c: string
  try {
    r = (await resolveExisting(root)).real
    c = (await resolveExisting(cacheDir)).real
  } catch (err) {
    return `--cache-dir ${shownPath(cacheDir)}: ${errorMessage(err)}`
  }
  const how = r === c ? 'is' : isInside(r, c) ? 'is inside' : isInside(c, r) ? 'contains' : undefined
  if (how === undefined) return undefined
  return `--cache-dir ${shownPath(cacheDir)} ${how} --root ${shownPath(root)}: give the cache a directory of its own, apart from the files NodeConfigs write`
}
