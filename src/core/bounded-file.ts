/**
 * @module bounded-file — the one reader of the files edgeop is pointed at: bounded in bytes and in time, UTF-8 checked.
 *
 * A file a user names (a kubeconfig and the CA, certificate, key and token files it names, the
 * service-account files, the clusters file, serving certificates, cache snapshots) may be a device
 * that never ends (`/dev/zero`), a FIFO whose writer never writes, or far larger than any such file
 * is. `fs.readFile` reads all of it before any check (`--kubeconfig=/dev/zero` took 610 MB and ended
 * in "RangeError: Invalid string length") and blocks a libuv thread on a FIFO for good. This reader
 * opens without blocking (`O_NONBLOCK`, so neither the open nor a read waits on a pipe), holds at
 * most `maxBytes + 1` bytes, and gives up after `timeoutMs`.
 */
import { isUtf8 } from 'node:buffer'
import { constants, type Stats } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { sleep } from './clock.ts'
import { EdgeopError } from './errors.ts'
import { bytePosition, firstInvalidUtf8 } from './utf8.ts'

/**
 * 10 s for a whole read. A local file of a few MiB reads in milliseconds; the slack is for a pipe,
 * such as a shell's process substitution (`--kubeconfig=<(vault read …)`), whose writer is still
 * starting. A FIFO nobody writes to otherwise held start-up silent for good.
 */
export const DEFAULT_FILE_READ_TIMEOUT_MS = 10_000

/** 10 ms between reads of a pipe or device that has no bytes yet (`EAGAIN`): about 1,000 polls over the whole timeout. */
const EMPTY_READ_POLL_MS = 10

/** First buffer for a file whose size `stat` does not tell (pipes, devices, procfs): 64 KiB, a pipe's buffer on Linux. */
const UNKNOWN_SIZE_CHUNK = 64 * 1024

/** What to read and its bounds. */
export interface BoundedReadOptions {
  /** Most bytes accepted; a file with more is refused after reading `maxBytes + 1` of them (never the rest). */
  maxBytes: number
  /** What the file is, for errors: `kubeconfig`, `token file`, `clusters file`. */
  what: string
  /** Whole read, open to close, in milliseconds. Default {@link DEFAULT_FILE_READ_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Added to the too-large error after a `;`, e.g. `a kubeconfig is normally a few KiB: is this the right file?`. */
  hint?: string
  /**
   * Accept only a regular file, never following a symlink at `file` itself: for files edgeop wrote and reads
   * back (snapshots, the agent's records), where a FIFO, a device or a link is never edgeop's own.
   */
  regularFile?: boolean
  /** How errors name the file, when `file` is not how a person knows it (a `/proc/self/fd/…` path). Default `file`. */
  shown?: string
}

/** `8 MiB`, `64 KiB` or `1000 bytes`: a limit as people write it. */
export function formatByteLimit(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`
  if (bytes >= 1 << 10 && bytes % (1 << 10) === 0) return `${bytes / (1 << 10)} KiB`
  return `${bytes} bytes`
}

function fileError(options: BoundedReadOptions, message: string, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_FILE', message, { step: `read ${options.what}`, cause })
}

function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  return 'a special file'
}

/**
 * The bytes of `file`, at most `options.maxBytes` of them.
 *
 * Guarantees: never holds more than `maxBytes + 1` bytes of the file; never waits on a pipe or
 * device longer than `timeoutMs` in all; the file is closed on every path.
 * Does not guarantee: a consistent snapshot of a file that changes while it is read.
 *
 * @throws the `fs` error as it is (with `code`: `ENOENT`, `EACCES`, `EISDIR`, …); EdgeopError
 *   `EDGEOP_ERR_FILE` naming the file and the limit when it is larger than `maxBytes` or does not end
 *   within `timeoutMs`.
 */
export async function readBoundedFile(file: string, options: BoundedReadOptions): Promise<Buffer> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FILE_READ_TIMEOUT_MS
  const deadline = performance.now() + timeoutMs
  const shown = options.shown ?? file
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY
  let handle: FileHandle
  try {
    handle = await open(file, options.regularFile ? flags | constants.O_NOFOLLOW : flags)
  } catch (err) {
    if (options.regularFile && (err as { code?: unknown }).code === 'ELOOP')
      throw fileError(options, `${shown} is a symlink, not a regular file`, err)
    throw err
  }
  try {
    const stat = await handle.stat()
    if (options.regularFile && !stat.isFile())
      throw fileError(options, `${shown} is ${fileKind(stat)}, not a regular file`)
    const cap = options.maxBytes + 1
    let buf = Buffer.allocUnsafe(
      Math.min(cap, stat.isFile() && stat.size > 0 ? stat.size + 1 : UNKNOWN_SIZE_CHUNK),
    )
    let length = 0
    while (length < cap) {
      if (length === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(cap, buf.length * 2))
        buf.copy(bigger, 0, 0, length)
        buf = bigger
      }
      let read = -1
      try {
        read = (await handle.read(buf, length, buf.length - length, null)).bytesRead
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'EAGAIN') throw err
      }
      if (read === 0) break
      if (read > 0) length += read
      if (performance.now() >= deadline) {
        throw fileError(
          options,
          `${options.what} ${shown} did not end within ${timeoutMs / 1000} s (edgeop's limit for reading a file; a pipe or device that never ends?)`,
        )
      }
      if (read < 0) await sleep(EMPTY_READ_POLL_MS)
    }
    if (length > options.maxBytes) {
      throw fileError(
        options,
        `${options.what} ${shown} is larger than the ${formatByteLimit(options.maxBytes)} edgeop reads${options.hint ? `; ${options.hint}` : ''}`,
      )
    }
    return buf.subarray(0, length)
  } finally {
    await handle.close()
  }
}

/**
 * The text of `file`: {@link readBoundedFile}, then a strict UTF-8 decode.
 *
 * @throws as {@link readBoundedFile}; EdgeopError `EDGEOP_ERR_FILE` naming the file, line and column of
 *   the first byte that is not UTF-8.
 */
export async function readBoundedText(file: string, options: BoundedReadOptions): Promise<string> {
  const bytes = await readBoundedFile(file, options)
  if (isUtf8(bytes)) return bytes.toString('utf8')
  const at = firstInvalidUtf8(bytes)
  const { line, column } = bytePosition(bytes, at)
  const hex = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')
  throw fileError(
    options,
    `${options.what} ${file}:${line}:${column}: invalid UTF-8 (byte 0x${hex}); it must be UTF-8 text`,
  )
}
