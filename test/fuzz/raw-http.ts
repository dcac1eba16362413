/**
 * @module raw-http — one raw exchange with a server on loopback: write the fuzzed bytes as they are
 * (no client library to reject them first), half-close, read whatever comes back until the server
 * closes, then check with a well-formed request that the server still answers.
 */
import { type Socket, connect as tcpConnect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { describeError, escapedErrors, Finding, type FuzzSession } from './harness.ts'

/**
 * How long one exchange may take before the client gives up on it: far above a loopback answer
 * (about a millisecond), far below the servers' own header and request timeouts (10 s and more),
 * so an input that leaves the server waiting is cut here, not by them.
 */
export const EXCHANGE_TIMEOUT_MS = 2_000

/** Where a server listens, and whether it speaks TLS. */
export interface Endpoint {
  host: string
  port: number
  tls: boolean
}

/** `host:port` (IPv6 in brackets, as `listen` returns it) as an {@link Endpoint}. */
export function endpoint(address: string, tls: boolean): Endpoint {
  const i = address.lastIndexOf(':')
  return { host: address.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(i + 1)), tls }
}

function open(e: Endpoint): Socket {
  return e.tls
    ? tlsConnect({ host: e.host, port: e.port, rejectUnauthorized: false })
    : tcpConnect({ host: e.host, port: e.port, allowHalfOpen: true })
}

/** Sends `bytes`, half-closes, and resolves with everything the server wrote before it closed. */
export function exchange(e: Endpoint, bytes: Uint8Array): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = open(e)
    const chunks: Buffer[] = []
    const done = (): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve(Buffer.concat(chunks))
    }
    const timer = setTimeout(done, EXCHANGE_TIMEOUT_MS)
    socket.on(e.tls ? 'secureConnect' : 'connect', () => {
      socket.write(bytes)
      socket.end()
    })
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', done)
    socket.on('close', done)
  })
}

/** The status code of the first response in `reply`, or undefined when there is none. */
export function statusOf(reply: Buffer): number | undefined {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(reply.toString('latin1', 0, 16))
  return m ? Number(m[1]) : undefined
}

/**
 * Throws a {@link Finding} unless a well-formed `request` to `e` is answered `want`: the server
 * survived the input before it and still serves.
 */
export async function assertServes(e: Endpoint, request: string, want: number): Promise<void> {
  const status = statusOf(await exchange(e, new Uint8Array(Buffer.from(request, 'latin1'))))
  if (status !== want)
    throw new Finding(
      `the server no longer serves: ${JSON.stringify(request.split('\r\n')[0])} got ${status ?? 'no answer'}`,
    )
}

/**
 * A session sending each input to every endpoint of `to`, then checking each `probe` is still answered
 * as it wants, and that no error escaped a promise chain meanwhile (the process would exit).
 */
export function serverSession(
  to: readonly Endpoint[],
  probes: readonly { at: Endpoint; request: string; want: number }[],
  close: () => Promise<void>,
): FuzzSession {
  const escaped = escapedErrors()
  return {
    async run(input) {
      await Promise.all(to.map((e) => exchange(e, input)))
      for (const p of probes) await assertServes(p.at, p.request, p.want)
      const err = escaped.take()
      if (err !== undefined)
        throw new Finding(`escaped the request handler (the process would exit): ${describeError(err)}`, err)
    },
    async close() {
      escaped.stop()
      await close()
    },
  }
}
