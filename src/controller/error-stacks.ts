/**
 * @module error-stacks — which reconcile failures get their stack trace logged: the first of each
 * distinct error per object, so a bug shows where it was thrown without a retrying object repeating
 * the same trace on every backoff step.
 *
 * controller-runtime logs a reconciler's error with its stack (zap adds one at error level) and the
 * full stack of a panic; this keeps that information and drops the repetition.
 */
import { createHash } from 'node:crypto'

/**
 * Objects whose last logged stack is remembered: 1024. Each entry is the object key and a 16-character
 * digest, so the bound is about 100 KiB; past it the oldest object is forgotten and at worst logs its
 * stack once more. 1024 is well above the failing objects a controller has at one time.
 */
export const MAX_TRACKED_OBJECTS = 1024
/** A logged stack is cut after 4096 characters (Node keeps 10 frames by default: ~1 KiB). */
export const MAX_STACK_CHARS = 4096

/**
 * The stack frames of `err` (the `at …` lines), without the leading `Name: message` header, which may
 * span lines and is logged separately as the error's message. Undefined when there are none.
 */
export function stackFrames(err: Error): string | undefined {
  if (typeof err.stack !== 'string') return undefined
  const frames = err.stack
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .map((l) => l.trim())
  if (frames.length === 0) return undefined
  const joined = frames.join('\n')
  return joined.length > MAX_STACK_CHARS ? `${joined.slice(0, MAX_STACK_CHARS)}…` : joined
}

/**
 * Remembers, per object key, the last error logged with its stack.
 *
 * Guarantees: {@link stackFor} returns the frames for the first failure of a key and whenever the
 * error differs from the last one returned for that key (another name, `code` or throw site; the
 * message is not compared, since messages often carry changing values); {@link forget} (a successful
 * reconcile) makes the next failure log its stack again; memory is bounded by
 * {@link MAX_TRACKED_OBJECTS} keys, oldest dropped first.
 */
export class ErrorStacks {
  readonly #seen = new Map<string, string>()
  readonly #max: number

  constructor(max = MAX_TRACKED_OBJECTS) {
    this.#max = max
  }

  /** The stack to log with this failure of `key`, or undefined when it was already logged. */
  stackFor(key: string, err: Error): string | undefined {
    const frames = stackFrames(err)
    if (frames === undefined) return undefined
    const code = (err as { code?: unknown }).code
    const digest = createHash('sha256')
      .update(`${err.name}\0${typeof code === 'string' ? code : ''}\0${frames}`)
      .digest('hex')
      .slice(0, 16)
    const last = this.#seen.get(key)
    this.#seen.delete(key)
    this.#seen.set(key, digest)
    if (this.#seen.size > this.#max) this.#seen.delete(this.#seen.keys().next().value!)
    return last === digest ? undefined : frames
  }

  /** Forgets `key` (after it reconciled successfully). */
  forget(key: string): void {
    this.#seen.delete(key)
  }

  /** Keys remembered (for tests and metrics). */
  get size(): number {
    return this.#seen.size
  }
}
