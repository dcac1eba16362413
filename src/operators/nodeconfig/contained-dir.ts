/**
 * @module contained-dir — a directory under the root, opened one component at a time without following a symlink, and paths resolved from its descriptor.
 *
 * Node has no `openat`. Linux gives the same thing through procfs: `/proc/self/fd/<fd>/<name>`
 * makes the kernel look `name` up in the directory the descriptor holds, whatever has been
 * renamed or replaced along the path since it was opened. So the agent opens the root, then each
 * directory below it relative to the previous one with `O_NOFOLLOW | O_DIRECTORY` (a symlink
 * anywhere in the chain fails instead of being followed), and names the temporary file, the
 * rename and the removal relative to the last descriptor. A path checked and then used could be
 * redirected between the two by someone renaming a directory; a descriptor cannot.
 *
 * Assumes Linux with procfs mounted (the agent runs on Kubernetes nodes); elsewhere every write
 * fails with ENOENT on `/proc/self/fd`. Does not guarantee: a directory moved out of the root
 * after the last check and before the rename takes the file with it (as it would a moment later).
 */
import { constants } from 'node:fs'
import { type FileHandle, mkdir, open, readlink } from 'node:fs/promises'
import { isInside, PathRefusedError } from './paths.ts'

/** Where Linux lists a process's open descriptors; a directory's entry resolves names inside it. */
export const FD_DIR = '/proc/self/fd'

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/** The path of `name` inside the directory open as `dir`: looked up from the descriptor, not a path. */
export function inDir(dir: FileHandle, name: string): string {
  return `${FD_DIR}/${dir.fd}/${name}`
}

/** The real path of what `fh` has open now (after any rename of it or of its directories). */
export function openPath(fh: FileHandle): Promise<string> {
  return readlink(`${FD_DIR}/${fh.fd}`)
}

/**
 * Opens the directory `segments` below `realRoot` (the root's real path), one component at a
 * time relative to the previous descriptor, never following a symlink. Missing components are
 * created with `create` as their mode, or, without it, the result is undefined. The caller closes
 * the handle.
 *
 * Throws {@link PathRefusedError} when a component is a symlink or not a directory, and when the
 * opened directory is no longer inside `realRoot` (a directory above it was moved out); other
 * errors (EACCES, ENOSPC) as they come.
 */
export async function openContainedDir(
  realRoot: string,
  segments: readonly string[],
  path: string,
  o: { create?: number } = {},
): Promise<FileHandle | undefined> {
  let dir = await open(realRoot, DIRECTORY_FLAGS)
  try {
    for (const segment of segments) {
      const next = inDir(dir, segment)
      if (o.create !== undefined)
        await mkdir(next, { mode: o.create }).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err
        })
      let opened: FileHandle
      try {
        opened = await open(next, DIRECTORY_FLAGS)
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        if (code === 'ENOENT' && o.create === undefined) {
          await dir.close()
          return undefined
        }
        if (code === 'ELOOP' || code === 'ENOTDIR')
          throw new PathRefusedError(`${path}: a parent directory is a symlink or not a directory`)
        throw err
      }
      await dir.close()
      dir = opened
    }
    if (!isInside(realRoot, await openPath(dir)))
      throw new PathRefusedError(`${path}: a parent directory leads outside the root (moved)`)
    return dir
  } catch (err) {
    await dir.close().catch(() => {})
    throw err
  }
}
