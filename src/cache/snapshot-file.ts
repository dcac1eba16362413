/**
 * @module snapshot-file — atomic snapshot files and the lock that gives a cache directory one owner.
 *
 * A write goes to a temporary file beside the target, is fsynced, renamed over the
 * target and the directory is fsynced: after a crash or power cut the target holds the
 * old snapshot or the new one, never a mix (POSIX rename is atomic; the directory fsync
 * makes the rename durable).
 */
import { mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'

/** Name of the lock file in a cache directory; it holds the owner's pid. */
export const SNAPSHOT_LOCK_FILE = 'lock'

/**
 * Writes `data` to `path` atomically and durably (temp file, fsync, rename, fsync of the
 * directory). On failure the temporary file is removed and the error (ENOSPC, EROFS,
 * EACCES, …) is rethrown; `path` is untouched.
 */
export async function writeFileAtomic(path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`
  try {
    const f = await open(tmp, 'w', 0o600)
    try {
      await f.writeFile(data)
      await f.sync()
    } finally {
      await f.close()
    }
    await rename(tmp, path)
  } catch (err) {
    await unlink(tmp).catch(() => {})
    throw err
  }
  const dir = await open(dirname(path), 'r')
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
}

/** The bytes of `path`, or undefined when it does not exist; other errors are thrown. */
export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

function alive(pid: number): boolean {
  try {
    return process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Makes this process the only user of cache directory `dir` (created if missing) by
 * creating `dir/lock` (exclusively) with its pid. A lock whose pid is dead, or is this
 * process's own pid (a restarted container is pid 1 again), is stale and taken over.
 * Returns the release function (removes the lock). Throws `EDGEOP_ERR_FILE` naming the
 * directory and the owner's pid when a live process holds it, or the directory cannot be used.
 */
export async function lockCacheDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, SNAPSHOT_LOCK_FILE)
  const fail = (message: string, cause?: unknown): EdgeopError =>
    new EdgeopError('EDGEOP_ERR_FILE', `--cache-dir ${dir}: ${message}`, {
      step: 'lock cache directory',
      cause,
    })
  try {
    await mkdir(dir, { recursive: true })
    for (;;) {
      try {
        await writeFile(path, `${process.pid}\n`, { flag: 'wx' })
        return () => unlink(path).catch(() => {})
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
      const pid = Number.parseInt(`${await readIfExists(path)}`, 10)
      if (pid > 0 && pid !== process.pid && alive(pid))
        throw fail(`in use by process ${pid} (${path}); give each process its own directory`)
      await unlink(path).catch(() => {})
    }
  } catch (err) {
    throw isEdgeopError(err) ? err : fail(`cannot be used: ${errorMessage(err)}`, err)
  }
}
