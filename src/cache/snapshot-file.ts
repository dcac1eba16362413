/**
 * @module snapshot-file — atomic snapshot files and the lock that gives a cache directory one owner.
 *
 * A write goes to a temporary file beside the target, is fsynced, renamed over the
 * target and the directory is fsynced: after a crash or power cut the target holds the
 * old snapshot or the new one, never a mix (POSIX rename is atomic; the directory fsync
 * makes the rename durable).
 */
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { type FileHandle, link, open, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { readBoundedFile } from '../core/bounded-file.ts'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'
import { ownDirectory } from './own-directory.ts'

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the written file. Default 0o600. */
  mode?: number
  /** Name prefix of the temporary file (a random suffix follows). Default `.edgeop-tmp-`. */
  tempPrefix?: string
  /**
   * Called with the temporary file, written and fsynced, before the rename; a throw aborts the
   * write (the temporary file is removed, `target` untouched). E.g. a check of where the file is.
   */
  verify?: (fh: FileHandle) => Promise<void>
}

/**
 * Writes `data` to `target` atomically and durably: a temporary file beside it (created
 * exclusively, 0600), written, chmodded, fsynced, renamed over `target`, then the
 * directory fsynced. On failure (ENOSPC, EROFS, EACCES, …) the temporary file is
 * removed, the error rethrown and `target` is untouched. The directory must exist.
 */
export async function writeFileAtomic(
  target: string,
  data: Uint8Array,
  o: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(target)
  const tmp = join(dir, `${o.tempPrefix ?? '.edgeop-tmp-'}${randomBytes(8).toString('hex')}`)
  const fh = await open(tmp, 'wx', 0o600)
  try {
    try {
      await fh.writeFile(data)
      await fh.chmod(o.mode ?? 0o600)
      await fh.sync()
      await o.verify?.(fh)
    } finally {
      await fh.close()
    }
    await rename(tmp, target)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
  await syncDir(dir)
}

/** Fsyncs directory `dir`, so that a rename or removal in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Largest snapshot file read: V8's longest string (2^29 - 24 characters in Node 24) bounds
 * what could be decoded anyway, and the file is read whole into memory.
 */
export const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024

/**
 * The bytes of file `path` (a snapshot, a lock), or undefined when it does not exist: the bounded reader
 * of every file edgeop reads ({@link readBoundedFile}), for a regular file only. Reads only a
 * regular file: the path is opened without following a symlink and without blocking (a
 * FIFO would otherwise block the open until a writer came), checked with fstat, and read
 * to at most `maxBytes` ({@link MAX_SNAPSHOT_BYTES} for a snapshot). Anything else throws an
 * `EDGEOP_ERR_FILE` naming the file (`shown`, default `path`) and what it is (a FIFO, a symlink,
 * a directory, too large).
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  shown = path,
): Promise<Buffer | undefined> {
  try {
    return await readBoundedFile(path, { maxBytes, what: 'file', regularFile: true, shown })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (isEdgeopError(err)) throw err
    throw new EdgeopError(
      'EDGEOP_ERR_FILE',
      `${shown} cannot be opened (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)})`,
      { step: 'read file', cause: err },
    )
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
 * Name of the lock file in a cache directory: edgeop's own name, so that a directory shared by
 * mistake with another program (`/var/lib/dpkg` has a `lock`) never has that program's lock
 * taken over or removed.
 */
export const SNAPSHOT_LOCK_FILE = 'edgeop.lock'

/** What a lock file holds: this line and nothing else. A file of another content is not edgeop's. */
const LOCK_CONTENT = /^edgeop cache lock, pid ([1-9][0-9]{0,9})\n$/

/** Longest lock file read: the line above is under 40 bytes. */
const MAX_LOCK_BYTES = 64

const lockContent = (pid: number): string => `edgeop cache lock, pid ${pid}\n`

/**
 * Makes this process the only user of cache directory `dir` by creating `dir/edgeop.lock`
 * ({@link SNAPSHOT_LOCK_FILE}) holding `edgeop cache lock, pid <pid>`. The directory is taken as
 * `ownDirectory` takes it: a system directory is refused, a missing one created one level at a
 * time, mode 0700 (snapshots hold cluster objects). The lock appears whole or not at all (written beside it, then hard-linked into place,
 * which fails when it exists). A lock of edgeop's format whose pid is dead, or is this process's
 * own pid (a restarted container is pid 1 again), is stale and taken over; a file of that name in
 * any other format (or not a regular file) is never touched: the directory is refused.
 *
 * Returns the release function: it removes the lock only while it still holds this process's
 * line. Throws `EDGEOP_ERR_FILE` naming `--cache-dir` and the directory: held by a live process
 * (its pid), a system directory, a lock that is not edgeop's, or a directory that cannot be used.
 */
export async function lockCacheDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, SNAPSHOT_LOCK_FILE)
  const fail = (message: string, cause?: unknown): EdgeopError =>
    new EdgeopError('EDGEOP_ERR_FILE', `--cache-dir ${dir}: ${message}`, {
      step: 'lock cache directory',
      cause,
    })
  const own = await ownDirectory(dir, { mode: 0o700 })
  if ('problem' in own) throw fail(own.problem.message)
  const mine = lockContent(process.pid)
  try {
    for (;;) {
      if (await linkNew(path, mine))
        return async () => {
          const now = await readRegularFile(path, MAX_LOCK_BYTES).catch(() => undefined)
          if (now?.toString('latin1') === mine) await unlink(path).catch(() => {})
        }
      let held: Buffer | undefined
      try {
        held = await readRegularFile(path, MAX_LOCK_BYTES)
      } catch (err) {
        throw fail(
          `${path} is not edgeop's lock (${errorMessage(err)}); remove it or use another directory`,
          err,
        )
      }
      if (held === undefined) continue // released meanwhile
      const pid = Number(LOCK_CONTENT.exec(held.toString('latin1'))?.[1])
      if (!pid)
        throw fail(`${path} is not edgeop's lock (another content); remove it or use another directory`)
      if (pid !== process.pid && alive(pid))
        throw fail(`in use by process ${pid} (${path}); give each process its own directory`)
      await unlink(path).catch(() => {})
    }
  } catch (err) {
    throw isEdgeopError(err) ? err : fail(`cannot be used: ${errorMessage(err)}`, err)
  }
}

/** Creates `path` holding `text`, whole or not at all; false when `path` exists. */
async function linkNew(path: string, text: string): Promise<boolean> {
  const tmp = `${path}.${randomBytes(8).toString('hex')}`
  await writeFile(tmp, text, { flag: 'wx', mode: 0o644 })
  try {
    await link(tmp, path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    await unlink(tmp).catch(() => {})
  }
}
