/**
 * @module ip-address-octets — an IP address as the octets X.509 carries in a subjectAltName
 * `iPAddress` (RFC 5280 §4.2.1.6: 4 octets for IPv4, 16 for IPv6, network byte order).
 */
import { isIP } from 'node:net'

/** IPv6 has 8 groups of 16 bits (RFC 4291 §2.2). */
const IPV6_GROUPS = 8

/**
 * The 4 (IPv4) or 16 (IPv6) octets of `address`, or undefined when it is not an IP address or carries
 * a zone (`fe80::1%eth0`: a zone names a link of one host, and has no place in a certificate).
 * Accepts the text forms of RFC 4291 §2.2: `::` compression and a dotted IPv4 tail (`::ffff:10.0.0.1`).
 */
export function ipAddressOctets(address: string): Buffer | undefined {
  const family = isIP(address)
  if (family === 4) return Buffer.from(address.split('.').map(Number))
  if (family !== 6 || address.includes('%')) return undefined
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)]
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number]
          return [(a << 8) | b, (c << 8) | d]
        })
  const [head = '', tail] = address.split('::')
  const before = groups(head)
  const after = tail === undefined ? [] : groups(tail)
  const all = [...before, ...new Array<number>(IPV6_GROUPS - before.length - after.length).fill(0), ...after]
  const octets = Buffer.alloc(2 * IPV6_GROUPS)
  for (const [i, g] of all.entries()) octets.writeUInt16BE(g, 2 * i)
  return octets
}
