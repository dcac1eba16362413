/**
 * @module raw-http — bytes to a server exactly as written, for what an HTTP client library would
 * refuse to send (a malformed request target, a head cut in the middle): each helper resolves with
 * everything the server wrote, once the server has closed the connection.
 */
import { type Socket, connect as tcpConnect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'

/** An open connection: what was received so far, and a promise of everything once the server closes. */
export interface RawConnection {
  readonly socket: Socket
  /** Everything the server wrote, once it has closed the connection. */
  readonly closed: Promise<string>
  /** What the server wrote so far. */
  received(): string
}

/** Opens a connection to `address` (`host:port`), over TLS (any certificate) when `tls`, and sends `text` if given. */
export function rawConnection(address: string, text?: string, tls = false): RawConnection {
  const i = address.lastIndexOf(':')
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1')
  const port = Number(address.slice(i + 1))
  const socket = tls
    ? tlsConnect({ host, port, rejectUnauthorized: false, servername: 'localhost' })
    : tcpConnect({ host, port })
  let got = ''
  socket.setEncoding('utf8')
  socket.on('data', (d: string) => {
    got += d
  })
  const closed = new Promise<string>((resolve) => {
    socket.on('error', () => {})
    socket.on('close', () => resolve(got))
  })
  if (text !== undefined) socket.write(text)
  return { socket, closed, received: () => got }
}

/** Sends `text` (a whole request, `connection: close` advised) and resolves with the server's bytes once it closes. */
export function rawRequest(address: string, text: string, tls = false): Promise<string> {
  return rawConnection(address, text, tls).closed
}

/** The status code of the first response in `raw`, or 0 when there is none. */
export function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
}
