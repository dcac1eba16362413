/**
 * @module file-store — the agent's files under its root: atomic writes, hash-checked no-ops, removals, and the ownership record.
 *
 * Every write is temp file in the same directory → write → chmod → fsync → rename →
 * fsync of the directory, so a reader sees the old file or the new one, never a part,
 * and a crash leaves at worst a stray `.edgeop-tmp-*` file. Every path goes through
 * {@link containedTarget} first, then is reached from the root one directory descriptor at a
 * time without following symlinks (`contained-dir.ts`), and the file is created, renamed and
 * removed relative to its directory's descriptor: nothing outside the root is ever touched,
 * even while someone swaps a directory for a symlink.
 */
import { createHash } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, realpath, rmdir, unlink } from 'node:fs/promises'
import * as z from 'zod/mini'
import { readRegularFile, writeFileAtomic as writeDurably } from '../../cache/index.ts'
import { EdgeopError, errorMessage } from '../../core/index.ts'
import { inDir, openContainedDir, openPath } from './contained-dir.ts'
import { containedTarget, isInside, PathRefusedError, RESERVED_PREFIX } from './paths.ts'

/** Directories the agent creates: world-readable like /etc, writable by the agent only. */
export const DIR_MODE = 0o755
/** Prefix of temporary files; reserved by {@link RESERVED_PREFIX}, so no NodeConfig can claim one. */
export const TEMP_PREFIX = `${RESERVED_PREFIX}-tmp-`
/** The ownership record, relative to the root (inside the reserved directory). */
export const RECORD_PATH = `${RESERVED_PREFIX}/owners.json`
/** The record holds UIDs and hashes, no content, but nobody else needs to read it. */
export const RECORD_MODE = 0o600
/** Largest ownership record read: an entry is under 5 KB (a 4 KiB path at most), so this is thousands of files more than any node holds. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024

/** What the agent remembers about one file it wrote. */
export interface OwnedFile {
  /** UID of the owning NodeConfig. */
  uid: string
  /** Its name when written (for events and logs). */
  name: string
  /** sha256 (hex) of the content written. */
  sha256: string
  /** Octal mode written, e.g. `0644`. */
  mode: string
}

/** Path (relative to the root) → owner. Written atomically under the root. */
export interface OwnershipRecord {
  version: 1
  files: Record<string, OwnedFile>
}

const RecordSchema = z.object({
  version: z.literal(1),
  files: z.record(
    z.string(),
    z.object({ uid: z.string(), name: z.string(), sha256: z.string(), mode: z.string() }),
  ),
})

/** What {@link FileStore.ensure} did. */
export type EnsureOutcome = 'unchanged' | 'created' | 'replaced'

/** sha256 of `data`, hex. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** An empty record. */
export function emptyRecord(): OwnershipRecord {
  return { version: 1, files: {} }
}

/**
 * What the agent does with its files: a {@link FileStore} on a node. The seam for a test that runs
 * agents without a disk (an in-memory store under the simulator); the same guarantees are expected.
 */
export type NodeFiles = Pick<FileStore, 'open' | 'ensure' | 'remove' | 'loadRecord' | 'saveRecord'>

/**
 * The files under one root directory.
 *
 * Guarantees: every write and removal stays inside the root's real path; a file whose
 * content hash and mode already match is not rewritten (mtime and inode unchanged);
 * errors are `EDGEOP_ERR_FILE` naming the relative path, never the content.
 */
export class FileStore {
  readonly root: string
  #real: string | undefined

  constructor(root: string) {
    this.root = root
  }

  /** Creates the root if needed and resolves its real path (again on every call: it may change). */
  async open(): Promise<string> {
    try {
      await mkdir(this.root, { recursive: true, mode: DIR_MODE })
      this.#real = await realpath(this.root)
      return this.#real
    } catch (err) {
      throw fileError(`root ${this.root} is unusable: ${errorMessage(err)}`, 'open root', err)
    }
  }

  /**
   * Makes `path` hold exactly `content` with `mode`. Reads the existing file without
   * following a symlink; when its size, mode and sha256 match (`hash` = sha256 of
   * `content`), does nothing. Otherwise replaces it atomically (a symlink at `path` is
   * replaced, not followed).
   */
  async ensure(path: string, content: string, mode: number, hash: string): Promise<EnsureOutcome> {
    const real = await this.#root()
    try {
      await containedTarget(real, path)
    } catch (err) {
      throw wrap(path, 'resolve path', err)
    }
    const segments = path.split('/')
    const name = segments.pop()!
    const data = Buffer.from(content, 'utf8')
    let dir: FileHandle
    try {
      dir = (await openContainedDir(real, segments, path, { create: DIR_MODE }))!
    } catch (err) {
      throw wrap(path, 'open directory', err)
    }
    try {
      const target = inDir(dir, name)
      let existing: Stats | undefined
      try {
        existing = await lstat(target)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw wrap(path, 'inspect file', err)
      }
      if (existing?.isDirectory()) throw fileError(`${path}: a directory is in the way`, 'write file')
      // Only a regular file of the right size and mode is opened and hashed; anything else
      // (a symlink, a FIFO that would block a read, a device) is replaced without a look.
      if (existing?.isFile() && (existing.mode & 0o777) === mode && existing.size === data.length) {
        if (await sameRegularFile(target, existing.ino, hash)) return 'unchanged'
      }
      try {
        await writeInDir(real, dir, name, data, mode, path)
      } catch (err) {
        throw wrap(path, 'write file', err)
      }
      return existing ? 'replaced' : 'created'
    } finally {
      await dir.close()
    }
  }

  /**
   * Removes `path` (a file or symlink; never a directory) and then any parent directory
   * left empty, up to the root. Returns false when it was already gone.
   */
  async remove(path: string): Promise<boolean> {
    const real = await this.#root()
    try {
      await containedTarget(real, path)
    } catch (err) {
      throw wrap(path, 'resolve path', err)
    }
    const segments = path.split('/')
    const name = segments.pop()!
    let dir: FileHandle | undefined
    try {
      dir = await openContainedDir(real, segments, path)
    } catch (err) {
      throw wrap(path, 'open directory', err)
    }
    if (!dir) return false
    try {
      const target = inDir(dir, name)
      try {
        const st = await lstat(target)
        if (st.isDirectory()) throw fileError(`${path}: is a directory, not removing it`, 'remove file')
        await unlink(target)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
        throw wrap(path, 'remove file', err)
      }
      await dir.sync().catch(() => {})
    } finally {
      await dir.close()
    }
    // Parents left empty, deepest first, each removed from its own parent's descriptor.
    for (let depth = segments.length; depth > 0; depth--) {
      const parent = await openContainedDir(real, segments.slice(0, depth - 1), path).catch(() => undefined)
      if (!parent) break
      try {
        await rmdir(inDir(parent, segments[depth - 1]!))
      } catch {
        break // not empty (or not ours to judge): stop climbing
      } finally {
        await parent.close()
      }
    }
    return true
  }

  /**
   * The ownership record; empty when none was written yet. Throws when it is unreadable: not a
   * regular file (a FIFO would block the read forever), over {@link MAX_RECORD_BYTES}, not JSON,
   * malformed.
   */
  async loadRecord(): Promise<OwnershipRecord> {
    const real = await this.#root()
    const segments = RECORD_PATH.split('/')
    const name = segments.pop()!
    let bytes: Buffer | undefined
    try {
      const dir = await openContainedDir(real, segments, RECORD_PATH)
      if (!dir) return emptyRecord()
      try {
        bytes = await readRegularFile(inDir(dir, name), MAX_RECORD_BYTES, RECORD_PATH)
      } finally {
        await dir.close()
      }
    } catch (err) {
      throw fileError(`ownership record ${RECORD_PATH}: ${errorMessage(err)}`, 'read ownership record', err)
    }
    if (!bytes) return emptyRecord()
    const text = bytes.toString('utf8')
    let parsed: ReturnType<typeof RecordSchema.safeParse>
    try {
      parsed = RecordSchema.safeParse(JSON.parse(text))
    } catch (err) {
      throw fileError(`ownership record ${RECORD_PATH} is not JSON`, 'read ownership record', err)
    }
    if (!parsed.success)
      throw fileError(`ownership record ${RECORD_PATH} is malformed`, 'read ownership record')
    return parsed.data as OwnershipRecord
  }

  /** Writes the record atomically (sorted by path), in the reserved directory (mode 0700). */
  async saveRecord(record: OwnershipRecord): Promise<void> {
    const real = await this.#root()
    const segments = RECORD_PATH.split('/')
    const name = segments.pop()!
    try {
      const dir = (await openContainedDir(real, segments, RECORD_PATH, { create: 0o700 }))!
      try {
        const files = Object.fromEntries(Object.entries(record.files).sort(([a], [b]) => (a < b ? -1 : 1)))
        const json = `${JSON.stringify({ version: 1, files }, null, 1)}\n`
        await writeInDir(real, dir, name, Buffer.from(json), RECORD_MODE, RECORD_PATH)
      } finally {
        await dir.close()
      }
    } catch (err) {
      throw fileError(
        `cannot write the ownership record: ${errorMessage(err)}`,
        'write ownership record',
        err,
      )
    }
  }

  async #root(): Promise<string> {
    return this.#real ?? (await this.open())
  }
}

/**
 * Writes `data` as `name` in the directory open as `dir` atomically with `mode` (umask does not
 * apply): the cache's `writeFileAtomic` (temporary file created exclusively, written, chmodded,
 * fsynced, renamed, directory fsynced) on paths resolved from the descriptor, with
 * {@link TEMP_PREFIX}. Before the rename the temporary file's real path must still be inside
 * `realRoot`, or the write is refused (its directory was moved out) and the file removed.
 */
async function writeInDir(
  realRoot: string,
  dir: FileHandle,
  name: string,
  data: Uint8Array,
  mode: number,
  path: string,
): Promise<void> {
  await writeDurably(inDir(dir, name), data, {
    mode,
    tempPrefix: TEMP_PREFIX,
    verify: async (fh) => {
      if (!isInside(realRoot, await openPath(fh)))
        throw new PathRefusedError(`${path}: its directory was moved outside the root while written`)
    },
  })
}

/** True when `target` is still the regular file `ino` (never following a symlink) and hashes to `hash`. */
async function sameRegularFile(target: string, ino: number, hash: string): Promise<boolean> {
  let fh: FileHandle | undefined
  try {
    fh = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    const st = await fh.stat()
    return st.isFile() && st.ino === ino && sha256(await fh.readFile()) === hash
  } catch {
    return false // changed under us: rewrite it
  } finally {
    await fh?.close()
  }
}

function wrap(path: string, step: string, err: unknown): EdgeopError {
  if (err instanceof EdgeopError) return err
  const code = (err as NodeJS.ErrnoException).code
  return fileError(`${path}: cannot ${step} (${code ?? errorMessage(err)})`, step, err)
}

function fileError(message: string, step: string, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_FILE', message, { step, cause })
}
