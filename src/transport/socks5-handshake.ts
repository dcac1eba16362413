/**
 * @module socks5-handshake — the client side of a SOCKS5 CONNECT (RFC 1928) with username/password authentication (RFC 1929).
 *
 * undici has no SOCKS support, and the only runtime dependencies are undici and zod, so edgeop
 * speaks the handshake itself on a socket already connected to the SOCKS server. Like Go's SOCKS
 * dialer (golang.org/x/net `internal/socks`, which client-go uses for `socks5://`), it offers "no
 * authentication" and, when the proxy URL carries a user, "username/password", and sends host
 * names unresolved (the server resolves them).
 */
import { isIP } from 'node:net'
import type { Duplex } from 'node:stream'
import { ByteReader } from './byte-reader.ts'
import { proxyFailure } from './proxy-failure.ts'

const VERSION = 0x05
const NO_AUTH = 0x00
const USER_PASS = 0x02
const NO_ACCEPTABLE = 0xff
const CONNECT = 0x01
const ATYP_IPV4 = 0x01
const ATYP_DOMAIN = 0x03
const ATYP_IPV6 = 0x04

/** RFC 1928 section 6 reply codes, for messages. */
const REPLIES: Record<number, string> = {
  1: 'general SOCKS server failure',
  2: 'connection not allowed by ruleset',
  3: 'network unreachable',
  4: 'host unreachable',
  5: 'connection refused',
  6: 'TTL expired',
  7: 'command not supported',
  8: 'address type not supported',
}

/** Username and password for RFC 1929, each at most 255 bytes. Secrets: never in a message. */
export interface Socks5Credentials {
  username: string
  password: string
}

/**
 * Asks the SOCKS5 server at the other end of `socket` to connect to `host:port`; resolves once it
 * has (the socket then carries the tunnel, with no byte of it read). Rejects with a
 * {@link proxyFailure} naming `display` and the step that failed, never the credentials.
 */
export async function socks5Connect(
  socket: Duplex,
  host: string,
  port: number,
  credentials: Socks5Credentials | undefined,
  display: string,
): Promise<void> {
  const reader = new ByteReader(socket)
  const fail = (what: string): Error => proxyFailure(display, `SOCKS5 ${what}`)
  try {
    socket.write(Buffer.from(credentials ? [VERSION, 2, NO_AUTH, USER_PASS] : [VERSION, 1, NO_AUTH]))
    const [version, method] = await reader.read(2)
    if (version !== VERSION) throw fail('server answered the greeting with another protocol')
    if (
      method === NO_ACCEPTABLE ||
      (method === USER_PASS && !credentials) ||
      (method !== NO_AUTH && method !== USER_PASS)
    )
      throw fail(
        `server accepts none of the offered authentication methods${credentials ? '' : ' (the proxy URL has no user)'}`,
      )
    if (method === USER_PASS && credentials) {
      const user = Buffer.from(credentials.username)
      const pass = Buffer.from(credentials.password)
      if (user.length > 255 || pass.length > 255) throw fail('username or password is longer than 255 bytes')
      socket.write(Buffer.concat([Buffer.from([0x01, user.length]), user, Buffer.from([pass.length]), pass]))
      const [, status] = await reader.read(2)
      if (status !== 0) throw fail('server refused the username and password')
    }
    socket.write(Buffer.concat([Buffer.from([VERSION, CONNECT, 0x00]), address(host), port16(port)]))
    const [v, reply, , atyp] = await reader.read(4)
    if (v !== VERSION) throw fail('server answered CONNECT with another protocol')
    if (reply !== 0) throw fail(`CONNECT failed: ${REPLIES[reply!] ?? `reply ${reply}`}`)
    const length =
      atyp === ATYP_IPV4
        ? 4
        : atyp === ATYP_IPV6
          ? 16
          : atyp === ATYP_DOMAIN
            ? (await reader.read(1))[0]!
            : -1
    if (length < 0) throw fail('CONNECT reply has an unknown address type')
    await reader.read(length + 2) // the bound address and port: not needed
    reader.finish()
  } catch (err) {
    reader.release()
    throw err
  }
}

function address(host: string): Buffer {
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  const family = isIP(bare)
  if (family === 4) return Buffer.from([ATYP_IPV4, ...bare.split('.').map(Number)])
  if (family === 6) return Buffer.concat([Buffer.from([ATYP_IPV6]), ipv6Bytes(bare)])
  const name = Buffer.from(bare)
  return Buffer.concat([Buffer.from([ATYP_DOMAIN, Math.min(name.length, 255)]), name.subarray(0, 255)])
}

function port16(port: number): Buffer {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(port)
  return b
}

/** The 16 bytes of an IPv6 address (with `::` and an embedded IPv4 tail). */
function ipv6Bytes(addr: string): Buffer {
  let text = addr
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number]
    text = `${text.slice(0, -v4[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parts = (s: string | undefined) => (s ? s.split(':').map((h) => Number.parseInt(h, 16)) : [])
  const left = parts(head)
  const right = parts(tail)
  const words = [...left, ...Array(8 - left.length - right.length).fill(0), ...right]
  const out = Buffer.alloc(16)
  words.forEach((w, i) => void out.writeUInt16BE(w, i * 2))
  return out
}
