/**
 * @module self-signed-cert — certificates made in memory: a self-signed serving certificate for HTTPS
 * `/metrics` when no certificate files are given (controller-runtime does the same with client-go's
 * `GenerateSelfSignedCertKeyWithFixtures`), and a CA with serving certificates it signs, for admission
 * webhooks (`WebhookCertController`).
 *
 * Node can sign but not build an X.509 certificate, and the images ship no `openssl`: this file
 * encodes the few DER structures of one (X.690) itself. ECDSA P-256, SHA-256. The extensions are those
 * RFC 5280 asks of a CA and of a server certificate, so that `openssl verify -x509_strict` accepts
 * them: a CA has basicConstraints `CA:TRUE` and keyUsage keyCertSign and cRLSign (both critical); a
 * serving certificate has basicConstraints `CA:FALSE`, keyUsage digitalSignature (critical; an ECDSA
 * key signs the TLS handshake and encrypts no key, so no keyEncipherment), extKeyUsage serverAuth and
 * its subjectAltName (DNS names, IPv4 and IPv6 addresses as `iPAddress`). Both have key identifiers.
 */
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from 'node:crypto'
import { EdgeopError } from '../core/errors.ts'
import { ipAddressOctets } from './ip-address-octets.ts'

/** Validity: one year from an hour ago (client-go `GenerateSelfSignedCertKeyWithFixtures`: the hour absorbs clock skew). */
export const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 3_600_000
/** How far back the validity starts. */
export const SELF_SIGNED_BACKDATE_MS = 3_600_000
/** The names a self-signed certificate is issued for by default (client-go's fixture: `localhost`, 127.0.0.1). */
export const SELF_SIGNED_HOSTS: readonly string[] = ['localhost', '127.0.0.1']

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface CertificatePair {
  /** The certificate, PEM. */
  readonly cert: string
  /** The private key, PEM (PKCS#8). Secret: never log it. */
  readonly key: string
}

/** Tag-length-value: one DER element (X.690 §8.1; definite lengths only). */
function tlv(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content)
  const n = body.length
  const len =
    n < 0x80
      ? [n]
      : n < 0x100
        ? [0x81, n]
        : n < 0x10000
          ? [0x82, n >> 8, n & 0xff]
          : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]
  return Buffer.concat([Buffer.from([tag, ...len]), body])
}
const seq = (...c: Uint8Array[]): Buffer => tlv(0x30, ...c)
const hex = (h: string): Buffer => Buffer.from(h, 'hex')
/** OID 1.2.840.10045.4.3.2, ecdsa-with-SHA256 (RFC 5758 §3.2), in an AlgorithmIdentifier. */
const ECDSA_SHA256 = seq(hex('06082a8648ce3d040302'))
/** OID 2.5.4.3, commonName. */
const COMMON_NAME = hex('0603550403')
/** OID 2.5.29.17, subjectAltName (RFC 5280 §4.2.1.6). */
const SUBJECT_ALT_NAME = hex('0603551d11')
/** OID 2.5.29.19, basicConstraints (RFC 5280 §4.2.1.9). */
const BASIC_CONSTRAINTS = hex('0603551d13')
/** OID 2.5.29.15, keyUsage (RFC 5280 §4.2.1.3). */
const KEY_USAGE = hex('0603551d0f')
/** The extension's `critical TRUE`. */
const CRITICAL = hex('0101ff')
/** basicConstraints, critical, `cA TRUE`: what makes a CA. */
const CA_TRUE = seq(BASIC_CONSTRAINTS, CRITICAL, tlv(0x04, seq(hex('0101ff'))))
/** basicConstraints, critical, `cA FALSE` (the DEFAULT, so an empty SEQUENCE in DER): a certificate that signs none. */
const CA_FALSE = seq(BASIC_CONSTRAINTS, CRITICAL, tlv(0x04, seq()))
/**
 * keyUsage, critical (RFC 5280 §4.2.1.3: a CA's MUST be): keyCertSign (bit 5) and cRLSign (bit 6), a
 * BIT STRING `06` with its one unused trailing bit.
 */
const CA_KEY_USAGE = seq(KEY_USAGE, CRITICAL, tlv(0x04, hex('03020106')))
/** keyUsage, critical: digitalSignature (bit 0), `80` with 7 unused bits. What an ECDSA TLS server key does. */
const SERVING_KEY_USAGE = seq(KEY_USAGE, CRITICAL, tlv(0x04, hex('03020780')))
/** extKeyUsage (OID 2.5.29.37) id-kp-serverAuth (1.3.6.1.5.5.7.3.1, RFC 5280 §4.2.1.12). */
const SERVER_AUTH = seq(hex('0603551d25'), tlv(0x04, seq(hex('06082b06010505070301'))))

/**
 * A key identifier: SHA-1 of the public key's point (RFC 5280 §4.2.1.2, method 1). Certificates carry
 * their own (subjectKeyIdentifier) and their issuer's (authorityKeyIdentifier), so a client picks the
 * right CA of a bundle by key, not only by name, while two CAs are trusted during a rotation.
 */
function keyId(key: KeyObject): Buffer {
  const { x, y } = key.export({ format: 'jwk' })
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from([4]), Buffer.from(x!, 'base64url'), Buffer.from(y!, 'base64url')]))
    .digest()
}
/** OIDs 2.5.29.14 subjectKeyIdentifier and 2.5.29.35 authorityKeyIdentifier. */
const SKI = hex('0603551d0e')
const AKI = hex('0603551d23')

/** A certificate this file cannot issue as asked: `EDGEOP_ERR_INVALID` at the step `issue certificate`. */
const refused = (message: string): EdgeopError =>
  new EdgeopError('EDGEOP_ERR_INVALID', message, { step: 'issue certificate' })

/** The first year UTCTime cannot hold: its two-digit years stand for 1950–2049 (RFC 5280 §4.1.2.5.1). */
const GENERALIZED_TIME_FROM_YEAR = 2050
/** The first year UTCTime can hold. */
const UTC_TIME_FIRST_YEAR = 1950
/** The last year GeneralizedTime's four digits hold (RFC 5280 §4.1.2.5.2). */
const GENERALIZED_TIME_LAST_YEAR = 9999

/**
 * A Validity time (RFC 5280 §4.1.2.5): UTCTime `YYMMDDHHMMSSZ` through 2049, GeneralizedTime
 * `YYYYMMDDHHMMSSZ` from 2050 on, whole seconds. A UTCTime for 2050 would read back as 1950.
 *
 * @throws EdgeopError `EDGEOP_ERR_INVALID` for a time before 1950 or after 9999.
 */
function validityTime(ms: number, what: string): Buffer {
  const iso = new Date(ms).toISOString()
  const year = new Date(ms).getUTCFullYear()
  if (!(year >= UTC_TIME_FIRST_YEAR && year <= GENERALIZED_TIME_LAST_YEAR))
    throw refused(
      `a certificate's ${what} in the year ${year}: X.509 validity times run from ${UTC_TIME_FIRST_YEAR} to ${GENERALIZED_TIME_LAST_YEAR} (RFC 5280 4.1.2.5)`,
    )
  const t = `${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
  return year < GENERALIZED_TIME_FROM_YEAR
    ? tlv(0x17, Buffer.from(iso.slice(2, 4) + t, 'ascii'))
    : tlv(0x18, Buffer.from(iso.slice(0, 4) + t, 'ascii'))
}

/** A DNS name a certificate can carry: an IA5String of letters, digits, `-`, `_`, `.` (and `*` of a wildcard). */
const DNS_NAME = /^[A-Za-z0-9*_.-]+$/

/**
 * A subjectAltName GeneralName for `host`: `iPAddress` [7] (4 or 16 octets) or `dNSName` [2].
 *
 * @throws EdgeopError `EDGEOP_ERR_INVALID` for a host that is neither (an IPv6 zone, a non-ASCII or
 * spaced name): written as a DNS name it would match nothing.
 */
function altName(host: string): Buffer {
  const ip = ipAddressOctets(host)
  if (ip) return tlv(0x87, ip)
  if (!DNS_NAME.test(host))
    throw refused(
      `certificate host ${JSON.stringify(host)} is neither an IP address without a zone nor an ASCII DNS name (IDNs in xn-- form)`,
    )
  return tlv(0x82, Buffer.from(host, 'ascii'))
}

/** What {@link issueCertificate} makes. */
export interface CertificateOptions {
  /** DNS names, IPv4 and IPv6 addresses (subjectAltName); the first is also the subject CN unless `commonName` is given. Default {@link SELF_SIGNED_HOSTS}; unused for a CA. */
  hosts?: readonly string[]
  /** The subject CN. */
  commonName?: string
  /** Make a CA (basicConstraints `CA:TRUE`, keyUsage keyCertSign and cRLSign, no subjectAltName). */
  isCA?: boolean
  /** The CA that signs it (made by this function: its subject is its CN only). Absent: self-signed. */
  issuer?: CertificatePair
  /** Default {@link SELF_SIGNED_VALIDITY_MS}. */
  validityMs?: number
  /** Default: `Date.now()`. */
  now?: number
}

/**
 * A new key pair and a certificate valid `validityMs` from `now` − one hour ({@link SELF_SIGNED_BACKDATE_MS}), with a
 * random 127-bit serial: self-signed, or signed by `issuer` (its issuer name is the CA's CN). Its times
 * are whole seconds, as UTCTime through 2049 and GeneralizedTime from 2050 (RFC 5280 §4.1.2.5).
 *
 * @throws EdgeopError `EDGEOP_ERR_INVALID` when a host is neither an IP address nor an ASCII DNS name,
 * a serving certificate has no host, or the validity reaches outside the years 1950–9999.
 */
export function issueCertificate(o: CertificateOptions = {}): CertificatePair {
  const hosts = o.hosts ?? SELF_SIGNED_HOSTS
  const now = o.now ?? Date.now()
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x40 // positive, no leading zero octet
  const dn = (cn: string) => seq(tlv(0x31, seq(COMMON_NAME, tlv(0x0c, Buffer.from(cn)))))
  const name = dn(o.commonName ?? hosts[0] ?? 'localhost')
  const from = now - SELF_SIGNED_BACKDATE_MS
  const validity = seq(
    validityTime(from, 'notBefore'),
    validityTime(from + (o.validityMs ?? SELF_SIGNED_VALIDITY_MS), 'notAfter'),
  )
  if (!o.isCA && hosts.length === 0)
    throw refused('a serving certificate needs at least one host (RFC 5280 4.2.1.6: no empty subjectAltName)')
  const usage = o.isCA
    ? [CA_TRUE, CA_KEY_USAGE]
    : [CA_FALSE, SERVING_KEY_USAGE, SERVER_AUTH, seq(SUBJECT_ALT_NAME, tlv(0x04, seq(...hosts.map(altName))))]
  const issuer = o.issuer ? new X509Certificate(o.issuer.cert) : undefined
  const tbs = seq(
    hex('a003020102'), // [0] version v3
    tlv(0x02, serial),
    ECDSA_SHA256,
    issuer ? dn(issuer.subject.replace(/^CN=/, '')) : name,
    validity,
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        ...usage,
        seq(SKI, tlv(0x04, tlv(0x04, keyId(publicKey)))),
        ...(issuer ? [seq(AKI, tlv(0x04, seq(tlv(0x80, keyId(issuer.publicKey)))))] : []),
      ),
    ),
  )
  const signer = o.issuer ? createPrivateKey(o.issuer.key) : privateKey
  const signature = sign('sha256', tbs, { key: signer, dsaEncoding: 'der' })
  const der = seq(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), signature))
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n')
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  }
}

/**
 * A new key pair and a certificate for `hosts` (DNS names, IPv4 and IPv6 addresses, the first also the
 * subject CN), valid {@link SELF_SIGNED_VALIDITY_MS} from `now` − one hour ({@link SELF_SIGNED_BACKDATE_MS}), with a
 * random 127-bit serial. Clients cannot verify it against any CA: scrapers either skip verification or
 * are given real certificate files.
 */
export function selfSignedCertificate(
  hosts: readonly string[] = SELF_SIGNED_HOSTS,
  now: number = Date.now(),
): CertificatePair {
  return issueCertificate({ hosts, now })
}
