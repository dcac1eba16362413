/**
 * @module proxy-tunnel — a TCP stream to `host:port` through a proxy: HTTP CONNECT over `http://` or `https://`, or SOCKS5.
 *
 * What Go's `net/http` transport does for client-go: an `https://` proxy is reached over TLS
 * (verified with the cluster's TLS settings and the proxy's host name), an HTTP proxy is asked
 * `CONNECT host:port` with `Proxy-Authorization: Basic` when its URL carries a user, and a
 * `socks5://` proxy gets the SOCKS5 handshake (`socks5-handshake.ts`). The caller then speaks TLS
 * (or plain HTTP) to the API server inside the tunnel. One timer bounds the whole setup.
 */
import { connect as tcpConnect } from 'node:net'
import type { Duplex } from 'node:stream'
import type { SecureContext } from 'node:tls'
import { nodeTls } from '../core/node-builtins.ts'
import { ByteReader } from './byte-reader.ts'
import { noteConnectTimeout } from './connect-timeout.ts'
import { asProxyFailure, proxyFailure } from './proxy-failure.ts'
import type { ProxyRoute } from './proxy-selection.ts'
import { socks5Connect } from './socks5-handshake.ts'

/**
 * Longest CONNECT answer head read (bytes): 16 KiB, Go's `http.ReadResponse` default header limit
 * is larger (1 MiB), but a proxy's CONNECT answer is a status line and a few headers.
 */
export const MAX_CONNECT_ANSWER_BYTES = 16_384

/** How to reach the proxy itself. */
export interface TunnelOptions {
  /** Limit on reaching the proxy and its answer (ms). */
  timeoutMs: number
  /** TLS to an `https://` proxy: the cluster's context (CA, client certificate) and verification. */
  secureContext?: SecureContext | undefined
  rejectUnauthorized: boolean
  /** TCP keep-alive on the connection to the proxy (the tunnel's only socket): initial delay (ms). */
  keepAliveMs: number
}

/**
 * Opens a tunnel through `proxy` to `host:port` (`host` as in a URL, IPv6 in brackets). Resolves
 * with the stream to speak to `host:port` over; rejects with a proxy failure (`proxy-failure.ts`)
 * that names the proxy without its credentials, or a connect timeout noted with step `connect`.
 */
export function openTunnel(proxy: ProxyRoute, host: string, port: number, o: TunnelOptions): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const url = proxy.url
    const proxyPort =
      Number(url.port) || (url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : 1080)
    const proxyHost = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const socket: Duplex =
      url.protocol === 'https:'
        ? nodeTls().connect({
            host: proxyHost,
            port: proxyPort,
            servername: isNameForSni(proxyHost) ? proxyHost : '',
            secureContext: o.secureContext,
            rejectUnauthorized: o.rejectUnauthorized,
            ALPNProtocols: ['http/1.1'],
          })
        : tcpConnect({ host: proxyHost, port: proxyPort })
    ;(socket as import('node:net').Socket).setKeepAlive(true, o.keepAliveMs)
    ;(socket as import('node:net').Socket).setNoDelay(true)
    let settled = false
    const timer = setTimeout(() => {
      const err = noteConnectTimeout(
        proxyFailure(proxy.display, `no tunnel within ${o.timeoutMs} ms`, 'UND_ERR_CONNECT_TIMEOUT'),
        'connect',
        o.timeoutMs,
      )
      fail(err)
    }, o.timeoutMs)
    const fail = (err: unknown): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      reject(asProxyFailure(err, proxy.display))
    }
    const onEarlyError = (err: Error): void => fail(err)
    socket.once('error', onEarlyError)
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      const handshake =
        url.protocol === 'socks5:' || url.protocol === 'socks5h:'
          ? socks5Connect(socket, host, port, userOf(url), proxy.display)
          : httpConnect(socket, host, port, url, proxy.display)
      handshake.then(
        () => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          socket.off('error', onEarlyError)
          resolve(socket)
        },
        (err: unknown) => fail(err),
      )
    })
  })
}

/** The user of a proxy URL, percent-decoded; undefined when it names none. */
function userOf(url: URL): { username: string; password: string } | undefined {
  if (!url.username && !url.password) return undefined
  return { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
}

/** `CONNECT host:port` on `socket`; resolves on a 200 answer (Go accepts no other status). */
async function httpConnect(
  socket: Duplex,
  host: string,
  port: number,
  url: URL,
  display: string,
): Promise<void> {
  const authority = `${host}:${port}`
  const user = userOf(url)
  const auth = user
    ? `Proxy-Authorization: Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}\r\n`
    : ''
  const reader = new ByteReader(socket)
  try {
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`)
    const head = (await reader.readUntil('\r\n\r\n', MAX_CONNECT_ANSWER_BYTES)).toString('latin1')
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]
    if (status === undefined) throw proxyFailure(display, 'the answer to CONNECT is not HTTP')
    if (status !== '200') {
      // 407 is the standard answer; tinyproxy's BasicAuth answers a CONNECT with 401.
      const why =
        status === '407' || status === '401'
          ? ': the proxy wants other credentials, check the user in the proxy URL'
          : ''
      throw proxyFailure(display, `CONNECT ${authority} answered ${status}${why}`)
    }
    reader.finish()
  } catch (err) {
    reader.release()
    throw err
  }
}

/** SNI carries host names only, never IP literals (RFC 6066). */
function isNameForSni(host: string): boolean {
  return !/^[\d.]+$/.test(host) && !host.includes(':')
}
