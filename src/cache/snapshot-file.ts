/**
 * @module snapshot-file — atomic snapshot files and the lock that gives a cache directory one owner.
 *
 * A write goes to a temporary file beside the target, is fsynced, renamed over the
 * target and the directory is fsynced: after a crash or power cut the target holds the
 * old snapshot or the new one, never a mix (POSIX rename is atomic; the directory fsync
 * makes the rename durable).
 */
import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { type FileHandle, mkdir, open, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'

/** Name of the lock file in a cache directory; it holds the owner's pid. */
export const SNAPSHOT_LOCK_FILE = 'lock'

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the written file. Default 0o600. */
  mode?: number
  /** Name prefix of the temporary file (a random suffix follows). Default `.edgeop-tmp-`. */
  tempPrefix?: string
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

/** The bytes of `path`, or undefined when it does not exist; other errors are thrown. */
export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * Largest snapshot file read: V8's longest string (2^29 - 24 characters in Node 24) bounds
 * what could be decoded anyway, and the file is read whole into memory.
 */
export const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024

/**
 * The bytes of snapshot file `path`, or undefined when it does not exist. Reads only a
 * regular file: the path is opened without following a symlink and without blocking (a
 * FIFO would otherwise block the open until a writer came), checked with fstat, and read
 * to at most `maxBytes` (default {@link MAX_SNAPSHOT_BYTES}). Anything else throws an
 * `EDGEOP_ERR_FILE` naming the path and what it is (a FIFO, a symlink, a directory, too large).
 */
export async function readSnapshotFile(
  path: string,
  maxBytes = MAX_SNAPSHOT_BYTES,
): Promise<Buffer | undefined> {
  const refuse = (what: string, cause?: unknown): EdgeopError =>
    new EdgeopError('EDGEOP_ERR_FILE', `${path} ${what}`, { step: 'read cache snapshot', cause })
  let fh: FileHandle
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw refuse('is a symlink, not a regular file', err)
    throw refuse(`cannot be opened (${code ?? errorMessage(err)})`, err)
  }
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw refuse(`is ${fileKind(st)}, not a regular file`)
    if (st.size > maxBytes) throw refuse(`is ${st.size} bytes, over the ${maxBytes}-byte limit`)
    // The size may change under us: read at most one byte past the cap to notice.
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1)
    let n = 0
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
      if (n === buf.length) throw refuse('grew while it was read')
    }
    return buf.subarray(0, n)
  } finally {
    await fh.close()
  }
}

function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  return 'a special file'
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
