/**
 * @module response-body — exchange bodies without a socket: a whole answer, and a watch stream the model pushes lines into.
 */
import { Buffer } from 'node:buffer'
import type { ExchangeBody } from '../../transport/exchange.ts'

/** A complete body: one chunk, or `text()`. */
export function wholeBody(text: string): ExchangeBody {
  let done = false
  return {
    text: async () => text,
    destroy: () => {
      done = true
    },
    async *[Symbol.asyncIterator]() {
      if (!done && text !== '') yield Buffer.from(text)
    },
  }
}

/**
 * A streamed body fed by {@link StreamBody.push}; ends after {@link StreamBody.end} (or `destroy()`
 * by the reader, which calls `onClose`). A failed stream ({@link StreamBody.fail}) throws `error` to the reader.
 */
export class StreamBody implements ExchangeBody {
  readonly #queue: Buffer[] = []
  #wake: (() => void) | undefined
  #ended = false
  #error: Error | undefined
  readonly #onClose: () => void

  /** `onClose` runs once, when the stream ends for any reason. */
  constructor(onClose: () => void) {
    this.#onClose = onClose
  }

  /** Whether the stream has ended. */
  get ended(): boolean {
    return this.#ended
  }

  /** Queues one line (a watch event) for the reader. */
  push(line: string): void {
    if (this.#ended) return
    this.#queue.push(Buffer.from(`${line}\n`))
    this.#signal()
  }

  /** Ends the stream after the queued lines (the server closed it). */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#onClose()
    this.#signal()
  }

  /** Ends the stream with `error` after the queued lines (a connection lost mid-stream). */
  fail(error: Error): void {
    this.#error ??= error
    this.end()
  }

  /** Not used for streams: the reader iterates. */
  async text(): Promise<string> {
    const parts: string[] = []
    for await (const c of this) parts.push(String(c))
    return parts.join('')
  }

  /** The reader is done: nothing more is delivered. */
  destroy(): void {
    this.#queue.length = 0
    this.end()
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      const next = this.#queue.shift()
      if (next) {
        yield next
        continue
      }
      if (this.#ended) {
        if (this.#error) throw this.#error
        return
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
    }
  }

  #signal(): void {
    const w = this.#wake
    this.#wake = undefined
    w?.()
  }
}
