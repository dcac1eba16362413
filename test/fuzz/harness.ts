/**
 * @module harness — what a fuzz target is, the byte mutator every target shares, its seed corpus, and
 * the oracle: an input is answered as documented (a value, an `EdgeopError` with one of the listed codes,
 * an HTTP answer) or it is a finding.
 *
 * Inputs are bytes. A mutated input is a seed of the target's corpus (`test/fuzz/corpus/<target>/`)
 * with a few edits — flip a bit, insert bytes or a token of the target's dictionary, delete, repeat a
 * slice many times (how repetition and alias bombs are reached), nest a JSON value deep after a colon,
 * splice in another seed — or a few raw random bytes. The edits are a fast-check arbitrary, so a failing input shrinks and replays from the
 * run's seed; the long run (`run.ts`) samples the same arbitrary against a corpus that grows with coverage.
 */
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { type ErrorCode, isEdgeopError } from '../../src/core/errors.ts'

/** Where the committed seed corpora live, one folder per target. */
export const CORPUS_DIR = join(import.meta.dirname, 'corpus')

/** One entry point under fuzz, opened once per run. */
export interface FuzzTarget {
  /** The target's name: its file, its corpus folder and its `npm run fuzz` argument. */
  readonly name: string
  /** The entry point fed, and what counts as answered (for docs and reports). */
  readonly entry: string
  /** Tokens worth inserting (libFuzzer's dictionaries): syntax and field names of the format. */
  readonly dictionary: readonly string[]
  /** Inputs are cut to this many bytes: enough for depth and repetition bombs, bounded per input. */
  readonly maxBytes: number
  /** Starts what the target needs (servers, a directory); {@link FuzzSession.close} undoes it. */
  open(): Promise<FuzzSession>
}

/** A running target. */
export interface FuzzSession {
  /** Feeds one input; resolves when it was answered as documented, throws a {@link Finding} otherwise. */
  run(input: Uint8Array): Promise<void>
  /** Stops servers and removes temporary files. */
  close(): Promise<void>
}

/** An input the entry point did not answer as documented. `cause` is what it threw (or the bad answer). */
export class Finding extends Error {
  /** Creates a finding; `message` says what went wrong, never the whole input. */
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'Finding'
  }
}

/**
 * Rethrows `err` as a {@link Finding} unless it is an `EdgeopError` whose code is one of `codes`
 * (the module's documented error). A {@link Finding} passes through as it is.
 */
export function allowOnly(err: unknown, codes: readonly ErrorCode[]): void {
  if (err instanceof Finding) throw err
  if (isEdgeopError(err) && codes.includes(err.code)) return
  throw new Finding(`threw ${describeError(err)}`, err)
}

/** Runs `f`; what it throws must be an `EdgeopError` with one of `codes` (see {@link allowOnly}). */
export async function attempt(codes: readonly ErrorCode[], f: () => unknown): Promise<void> {
  try {
    await f()
  } catch (err) {
    allowOnly(err, codes)
  }
}

/** Runs `f`; it may throw only the decoders' documented `EDGEOP_ERR_DECODE`. */
export const decoding = (f: () => unknown): Promise<void> => attempt(['EDGEOP_ERR_DECODE'], f)

/** What one decoding path made of an input: a value, or a documented refusal and its message. */
export type Outcome = { value: unknown } | { refused: string }

/** The {@link Outcome} of `f`; an error other than `EDGEOP_ERR_DECODE` is a {@link Finding}. */
export async function decoded(f: () => unknown): Promise<Outcome> {
  try {
    return { value: await f() }
  } catch (err) {
    allowOnly(err, ['EDGEOP_ERR_DECODE'])
    return { refused: (err as Error).message }
  }
}

/**
 * `isDeepStrictEqual`, or undefined when the values are too deep for it to compare (it recurses, and the
 * fuzzer nests values thousands deep): the oracle then cannot tell, which is no finding.
 */
export function sameValue(a: unknown, b: unknown): boolean | undefined {
  try {
    return isDeepStrictEqual(a, b)
  } catch (err) {
    if (err instanceof RangeError) return undefined
    throw err
  }
}

/**
 * Two paths that must agree (eager and lazy decoding, whole and chunked input): a {@link Finding} when
 * one refuses what the other accepts, or their values differ.
 */
export function agree(what: string, a: Outcome, b: Outcome): void {
  if ('refused' in a || 'refused' in b) {
    if ('refused' in a !== 'refused' in b)
      throw new Finding(`${what}: one path refused the input, the other accepted it`)
    return
  }
  if (sameValue(a.value, b.value) === false) throw new Finding(`${what}: the paths decoded different values`)
}

/** `obj` without `metadata.managedFields` (a shallow copy; anything else as it is). */
export function withoutManagedFields(obj: unknown): unknown {
  const meta = (obj as { metadata?: unknown } | null)?.metadata
  if (typeof meta !== 'object' || meta === null || !('managedFields' in meta)) return obj
  const { managedFields: _, ...rest } = meta as Record<string, unknown>
  return { ...(obj as object), metadata: rest }
}

/**
 * Where targets keep scratch files: `/dev/shm` where it is writable (a memory filesystem: the snapshot
 * keeper's fsync costs nothing there, where it costs 50 ms an input on a busy disk), else the temp dir.
 */
export function scratchBase(): string {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return tmpdir()
  }
}

/**
 * A session for a target that reads a file: each input is written to `<scratch>/<name>` and handed to
 * `run` by path; the scratch directory goes at close.
 */
export async function fileSession(
  name: string,
  run: (file: string, input: Uint8Array) => Promise<void>,
): Promise<FuzzSession> {
  const dir = await mkdtemp(join(scratchBase(), `edgeop-fuzz-${name}-`))
  const file = join(dir, name)
  return {
    async run(input) {
      await writeFile(file, input)
      await run(file, input)
    },
    close: () => rm(dir, { recursive: true, force: true }),
  }
}

/** `Name: message` of a thrown value, first line only, at most 300 characters. */
export function describeError(err: unknown): string {
  const text =
    err instanceof Error
      ? `${err.name}${isEdgeopError(err) ? `(${err.code})` : ''}: ${err.message}`
      : `non-error ${typeof err}`
  return (text.split('\n')[0] ?? '').slice(0, 300)
}

/**
 * Catches what escapes every promise chain while an input runs (an uncaught exception or an unhandled
 * rejection would end the operator process): `take()` returns and clears the first one seen.
 */
export function escapedErrors(): { take(): unknown; stop(): void } {
  let first: { err: unknown } | undefined
  const on = (err: unknown): void => {
    first ??= { err }
  }
  process.on('uncaughtException', on)
  process.on('unhandledRejection', on)
  return {
    take() {
      const f = first
      first = undefined
      return f?.err
    },
    stop() {
      process.off('uncaughtException', on)
      process.off('unhandledRejection', on)
    },
  }
}

/** One seed of a corpus. */
export interface Seed {
  /** The file's name in `corpus/<target>/`. */
  readonly file: string
  /** Its bytes. */
  readonly bytes: Uint8Array
}

/** The seeds in `corpus/<target>/`, by file name. */
export function readCorpus(target: string): Seed[] {
  const dir = join(CORPUS_DIR, target)
  return readdirSync(dir)
    .sort()
    .map((file) => ({ file, bytes: new Uint8Array(readFileSync(join(dir, file))) }))
}

/** One edit of an input; positions are taken modulo the input's length when applied. */
export type Edit =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'token'; at: number; token: number }
  | { op: 'delete'; at: number; length: number }
  | { op: 'repeat'; at: number; length: number; times: number }
  | { op: 'splice'; at: number; other: number; from: number; length: number }
  | { op: 'set'; at: number; byte: number }
  | { op: 'nest'; at: number; times: number }

/** A mutated input: which seed (modulo the pool), then the edits; or raw bytes. */
export type Mutation = { base: number; edits: Edit[] } | { raw: Uint8Array }

/** Most edits one mutation applies: a handful, as libFuzzer's `-mutate_depth` default of 5. */
export const MAX_EDITS = 6
/** Longest repetition: 4096 copies of a slice of up to 16 bytes reaches depth 4096 from one `{"a":`. */
export const MAX_REPEAT = 4096
const MAX_SLICE = 16
const MAX_RAW_BYTES = 256

const edit: fc.Arbitrary<Edit> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('flip'), at: fc.nat(), bit: fc.nat({ max: 7 }) }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant('insert'), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }) }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('token'), at: fc.nat(), token: fc.nat() }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('delete'),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 64 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('repeat'),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: MAX_SLICE }),
      times: fc.oneof(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 2, max: MAX_REPEAT })),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('splice'),
      at: fc.nat(),
      other: fc.nat(),
      from: fc.nat(),
      length: fc.integer({ min: 1, max: 256 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('set'),
      at: fc.nat(),
      byte: fc.constantFrom(0, 0x0a, 0x22, 0x7f, 0xff),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('nest'),
      at: fc.nat(),
      times: fc.oneof(fc.integer({ min: 2, max: 64 }), fc.integer({ min: 2, max: MAX_REPEAT })),
    }),
    weight: 1,
  },
) as fc.Arbitrary<Edit>

/** The mutations every target is fed: mostly edited seeds, some raw bytes. */
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    arbitrary: fc.record({ base: fc.nat(), edits: fc.array(edit, { minLength: 1, maxLength: MAX_EDITS }) }),
    weight: 9,
  },
  { arbitrary: fc.record({ raw: fc.uint8Array({ maxLength: MAX_RAW_BYTES }) }), weight: 1 },
)

/** Applies `m` to a seed of `pool` (never empty), using the target's dictionary; cut to `maxBytes`. */
export function applyMutation(
  m: Mutation,
  pool: readonly Uint8Array[],
  dictionary: readonly Uint8Array[],
  maxBytes: number,
): Uint8Array {
  if ('raw' in m) return m.raw.subarray(0, maxBytes)
  let b = Buffer.from(pool[m.base % pool.length]!)
  const pos = (at: number, len: number): number => (len === 0 ? 0 : at % (len + 1))
  for (const e of m.edits) {
    const at = pos(e.at, b.length)
    switch (e.op) {
      case 'flip':
        if (at < b.length) b[at]! ^= 1 << e.bit
        break
      case 'set':
        if (at < b.length) b[at] = e.byte
        break
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), e.bytes, b.subarray(at)])
        break
      case 'token': {
        const t = dictionary.length ? dictionary[e.token % dictionary.length]! : new Uint8Array()
        b = Buffer.concat([b.subarray(0, at), t, b.subarray(at)])
        break
      }
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + e.length)])
        break
      case 'repeat': {
        const slice = b.subarray(at, at + e.length)
        const times = Math.min(e.times, Math.floor(maxBytes / Math.max(1, slice.length)))
        b = Buffer.concat([b.subarray(0, at), ...new Array<Buffer>(times).fill(slice), b.subarray(at)])
        break
      }
      case 'nest': {
        // After the next colon, a value nested `times` deep, and the old value under a new key: still
        // JSON inside an object, so the depth reaches whatever reads the object.
        const colon = b.indexOf(0x3a, at)
        if (colon < 0) break
        const deep = `${'{"a":'.repeat(e.times)}0${'}'.repeat(e.times)},"b":`
        b = Buffer.concat([b.subarray(0, colon + 1), Buffer.from(deep), b.subarray(colon + 1)])
        break
      }
      case 'splice': {
        const other = pool[e.other % pool.length]!
        const from = pos(e.from, other.length)
        b = Buffer.concat([b.subarray(0, at), other.subarray(from, from + e.length), b.subarray(at)])
        break
      }
    }
    if (b.length > maxBytes) b = b.subarray(0, maxBytes)
  }
  return new Uint8Array(b)
}

/** The dictionary of `target` as bytes. */
export function dictionaryBytes(target: FuzzTarget): Uint8Array[] {
  return target.dictionary.map((t) => new Uint8Array(Buffer.from(t, 'utf8')))
}

/** `bytes` as text for a log line: at most `max` characters, control characters escaped. */
export function preview(bytes: Uint8Array, max = 120): string {
  const s = JSON.stringify(Buffer.from(bytes.subarray(0, max)).toString('latin1'))
  return bytes.length > max ? `${s}… (${bytes.length} bytes)` : s
}

/**
 * `bytes` cut into chunks as a network would deliver them: the chunk size (1 to 97 bytes) comes from the
 * first byte, so the fuzzer also explores boundaries inside UTF-8 characters, lines and frames.
 */
export async function* chunksOf(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  const size = 1 + ((bytes[0] ?? 0) % 97)
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size)
}
