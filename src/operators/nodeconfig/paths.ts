/**
 * @module paths — which relative paths the agent accepts, and proof at write time that they stay inside the root.
 *
 * Two layers. {@link checkRelativePath} is pure and decides from the string alone: an
 * accepted path, joined to any root, resolves strictly inside that root. Then, because a
 * directory under the root may be a symlink to anywhere, {@link containedTarget}
 * resolves the real path of the deepest existing parent before every write or removal
 * and refuses when it lies outside the root's real path.
 */
import { realpath } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { EdgeopError, isEdgeopError } from '../../core/index.ts'
import { MAX_PATH_BYTES, MAX_SEGMENT_BYTES } from './api.ts'

/**
 * Segments starting with this are the agent's own (its ownership record in `.edgeop/`,
 * temporary files `.edgeop-tmp-*`), so no NodeConfig may claim them.
 */
export const RESERVED_PREFIX = '.edgeop'

/** The verdict on one path: accepted as is, or refused with a reason for the status. */
export type PathCheck = { ok: true; path: string } | { ok: false; reason: string }

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\x00-\x1f\x7f]/

/**
 * Accepts `path` only if it is already a normalised relative path: non-empty, at most
 * {@link MAX_PATH_BYTES} bytes, no NUL or other control character, no backslash (a
 * separator elsewhere, so refused to keep meaning unambiguous), no leading `/`, no empty,
 * `.` or `..` segment, no segment over {@link MAX_SEGMENT_BYTES} bytes, and no reserved
 * segment. Paths are not rewritten: `a//b` is refused rather than read as `a/b`, so two
 * NodeConfigs can only collide on the very same string. Unicode is kept byte for byte.
 *
 * Guarantees: when `ok`, `resolve(root, path)` is strictly inside `root` for any root.
 *
 * @example
 * checkRelativePath('etc/chrony.conf') // { ok: true, path: 'etc/chrony.conf' }
 * checkRelativePath('../etc/passwd')   // { ok: false, reason: '".." segments are not allowed' }
 */
export function checkRelativePath(path: string): PathCheck {
  const refuse = (reason: string): PathCheck => ({ ok: false, reason })
  if (typeof path !== 'string' || path === '') return refuse('the path is empty')
  if (Buffer.byteLength(path) > MAX_PATH_BYTES)
    return refuse(`the path is longer than ${MAX_PATH_BYTES} bytes`)
  if (CONTROL.test(path)) return refuse('the path contains a NUL or control character')
  if (path.includes('\\')) return refuse('backslashes are not allowed (use "/")')
  if (path.startsWith('/')) return refuse('absolute paths are not allowed')
  for (const segment of path.split('/')) {
    if (segment === '') return refuse('empty segments ("//" or a trailing "/") are not allowed')
    if (segment === '..') return refuse('".." segments are not allowed')
    if (segment === '.') return refuse('"." segments are not allowed')
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      return refuse(`a segment is longer than ${MAX_SEGMENT_BYTES} bytes`)
    if (segment.startsWith(RESERVED_PREFIX))
      return refuse(`segments starting with "${RESERVED_PREFIX}" are reserved`)
  }
  return { ok: true, path }
}

/** True when `candidate` (a real path) is `root` or below it. */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep)
}

/**
 * The absolute target of `path` under `realRoot` (the root's own real path), after
 * checking that the deepest parent that exists resolves — symlinks followed — inside
 * `realRoot`. The target itself is never followed: writes replace it and removals
 * unlink it, even when it is a symlink.
 *
 * Throws a {@link PathRefusedError} (`EDGEOP_ERR_FILE`) when the parent escapes, or
 * when `path` fails {@link checkRelativePath}.
 *
 * A check before the write, for a clear message: the write itself (the file store) opens
 * each directory without following symlinks, so a symlink swapped in after this check
 * cannot redirect it.
 */
export async function containedTarget(realRoot: string, path: string): Promise<string> {
  const checked = checkRelativePath(path)
  if (!checked.ok) throw fileError(`${path}: ${checked.reason}`)
  const target = join(realRoot, path)
  let dir = dirname(target)
  for (;;) {
    try {
      const real = await realpath(dir)
      if (!isInside(realRoot, real))
        throw fileError(`${path}: a parent directory leads outside the root (symlink)`)
      return target
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dir === realRoot) throw err
      dir = dirname(dir)
    }
  }
}

/**
 * A path the agent will not touch: not a normalised relative path, or leading outside
 * the root. Code `EDGEOP_ERR_FILE`, not retryable; match with {@link isPathRefused}.
 */
export class PathRefusedError extends EdgeopError {
  /** `message` names the path and why it is refused. */
  constructor(message: string) {
    super('EDGEOP_ERR_FILE', message, { step: 'check path' })
    this.name = 'PathRefusedError'
  }
}

/**
 * True for a {@link PathRefusedError} from any copy of edgeop: the path was never the
 * agent's to write or remove, so retrying cannot help. Other `EDGEOP_ERR_FILE` errors
 * (a disk full, a permission) may pass.
 */
export function isPathRefused(err: unknown): boolean {
  return isEdgeopError(err, 'EDGEOP_ERR_FILE') && (err as { name?: unknown }).name === 'PathRefusedError'
}

function fileError(message: string): PathRefusedError {
  return new PathRefusedError(message)
}
