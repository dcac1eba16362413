/**
 * @module byte-reader — reads a proxy's handshake answer from a socket, byte-exact, and hands the socket on untouched.
 *
 * A CONNECT or SOCKS5 answer is followed by the tunnel's bytes, which belong to whoever uses the
 * tunnel (TLS, or Node's HTTP parser). The reader pulls with `read()` in paused mode and, when
 * done, removes its listeners so the socket goes back to its initial state; a proxy that sent
 * bytes past its answer (a server speaks after the client in TLS and HTTP, so none are due) is an error.
 */
import type { Duplex } from 'node:stream'

/** Reads exact byte counts, or up to a delimiter, from a socket until {@link ByteReader.finish}. */
export class ByteReader {
  readonly #socket: Duplex
  #buffer = Buffer.alloc(0)
  #failure: Error | undefined
  #wake: (() => void) | undefined

  constructor(socket: Duplex) {
    this.#socket = socket
    socket.on('readable', this.#onReadable)
    socket.on('error', this.#onError)
    socket.on('end', this.#onEnd)
    socket.on('close', this.#onEnd)
  }

  /** The next `n` bytes; rejects when the socket ends or fails first. */
  async read(n: number): Promise<Buffer> {
    while (this.#buffer.length < n) await this.#more()
    const out = this.#buffer.subarray(0, n)
    this.#buffer = this.#buffer.subarray(n)
    return out
  }

  /** The bytes up to and including `delimiter`; rejects past `max` bytes without it. */
  async readUntil(delimiter: string, max: number): Promise<Buffer> {
    for (;;) {
      const at = this.#buffer.indexOf(delimiter)
      if (at >= 0) return this.read(at + delimiter.length)
      if (this.#buffer.length > max) throw new Error(`no ${JSON.stringify(delimiter)} within ${max} bytes`)
      await this.#more()
    }
  }

  /**
   * Stops reading and gives the socket back.
   *
   * @throws Error when bytes past the answer were received.
   */
  finish(): void {
    this.release()
    if (this.#buffer.length > 0) throw new Error(`${this.#buffer.length} unexpected bytes after the answer`)
  }

  /** Removes the reader's listeners (after a failure, before the socket is destroyed). */
  release(): void {
    this.#socket.off('readable', this.#onReadable)
    this.#socket.off('error', this.#onError)
    this.#socket.off('end', this.#onEnd)
    this.#socket.off('close', this.#onEnd)
  }

  #more(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve) => {
      this.#wake = resolve
    })
  }

  #onReadable = (): void => {
    for (let chunk = this.#socket.read(); chunk !== null; chunk = this.#socket.read())
      this.#buffer = Buffer.concat([this.#buffer, chunk as Buffer])
    this.#poke()
  }

  #onError = (err: Error): void => {
    this.#failure ??= err
    this.#poke()
  }

  #onEnd = (): void => {
    this.#failure ??= Object.assign(new Error('the proxy closed the connection'), { code: 'ECONNRESET' })
    this.#poke()
  }

  #poke(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
