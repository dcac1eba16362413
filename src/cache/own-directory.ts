/**
 * @module own-directory — takes a directory a flag names (a cache directory, the agent's root) as a process's own: refused when it is a system directory, created one level at a time otherwise.
 *
 * Two checks come before anything is created: the path as written, then with its deepest
 * existing part resolved through symlinks (that decides where a new directory would land).
 * Creation goes one level at a time: `mkdir(…, { recursive: true })` never returns on some
 * virtual filesystems (Node 24 spins under /proc), and a loop over the missing parts cannot.
 */
import type { Stats } from 'node:fs'
import { mkdir, realpath, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { errorMessage } from '../core/errors.ts'
import { systemDirectoryOf } from '../core/system-directories.ts'

/** Longest part of the given path repeated in a message. */
const MAX_SHOWN_CHARS = 128

/** Why a directory was refused: `system` a caller may let through deliberately; `unusable` it cannot. */
export interface DirectoryProblem {
  /** `system`: a system directory (see `systemDirectoryOf` in edgeop/core); `unusable`: anything else. */
  kind: 'system' | 'unusable'
  /** One line naming the path (quoted, cut at 128 characters) and what is wrong, without a flag name. */
  message: string
}

/** `dir` as a message shows it: JSON-quoted, cut at {@link MAX_SHOWN_CHARS}. */
export function shownPath(dir: string): string {
  return JSON.stringify(dir.length > MAX_SHOWN_CHARS ? `${dir.slice(0, MAX_SHOWN_CHARS)}…` : dir)
}

/**
 * The real path `dir` has or would have (`real`): its deepest existing part (`existing`, `st`)
 * resolved through symlinks (`base`), the missing parts (`missing`) appended. Throws what `stat`/`realpath` throw other than ENOENT/ENOTDIR.
 */
export async function resolveExisting(
  dir: string,
): Promise<{ real: string; base: string; existing: string; missing: string[]; st: Stats }> {
  const missing: string[] = []
  let existing = resolve(dir)
  for (;;) {
    try {
      const st = await stat(existing)
      const base = await realpath(existing)
      return { real: join(base, ...missing), base, existing, missing, st }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || existing === dirname(existing)) throw err
      missing.unshift(basename(existing))
      existing = dirname(existing)
    }
  }
}

/**
 * Makes `dir` an existing directory this process may use, or says why not. Refused, in this
 * order: an empty path; a system directory as written, then with its existing part resolved
 * (both before anything is created) unless `allowSystem`; a path whose existing part is not a
 * directory; one that cannot be created. Missing parts are created one level at a time with
 * `mode` (default 0o755, before the umask). Returns the directory's real path.
 *
 * @example
 * const r = await ownDirectory('/var/lib/edgeop/cache')
 * if ('problem' in r) exit(`--cache-dir: ${r.problem.message}`)
 */
export async function ownDirectory(
  dir: string,
  options: { allowSystem?: boolean; mode?: number } = {},
): Promise<{ real: string } | { problem: DirectoryProblem }> {
  const unusable = (message: string) => ({ problem: { kind: 'unusable' as const, message } })
  if (dir === '') return unusable('must not be empty')
  const shown = shownPath(dir)
  const system = (at: string) => {
    const found = options.allowSystem ? undefined : systemDirectoryOf(at)
    if (found === undefined) return undefined
    const where = found === at ? 'is a system directory' : `is inside ${found}, a system directory`
    const via = at === dir ? '' : ` (it resolves to ${at})`
    return { problem: { kind: 'system' as const, message: `${shown}${via} ${where}` } }
  }
  const before = system(resolve(dir))
  if (before) return before
  let found: Awaited<ReturnType<typeof resolveExisting>>
  try {
    found = await resolveExisting(dir)
  } catch (err) {
    return unusable(`${shown}: ${errorMessage(err)}`)
  }
  const { existing, missing, st } = found
  if (!st.isDirectory())
    return unusable(
      missing.length === 0
        ? `${shown} exists and is not a directory`
        : `${shown}: ${existing} is not a directory`,
    )
  const after = system(found.real)
  if (after) return after
  let real = found.base
  for (const part of missing) {
    real = join(real, part)
    try {
      await mkdir(real, { mode: options.mode ?? 0o755 })
    } catch (err) {
      return unusable(`${shown} does not exist and cannot be created: ${errorMessage(err)}`)
    }
  }
  return { real: found.real }
}
