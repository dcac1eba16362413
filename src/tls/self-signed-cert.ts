/**
 * @module self-signed-cert — certificates made in memory: a self-signed serving certificate for HTTPS
 * `/metrics` when no certificate files are given (controller-runtime does the same with client-go's
 * `GenerateSelfSignedCertKeyWithFixtures`), and a CA with serving certificates it signs, for admission
 * webhooks (`WebhookCertController`).
 *
 * Node can sign but not build an X.509 certificate, and the images ship no `openssl`: this file
 * encodes the few DER structures of one (X.690) itself. ECDSA P-256, SHA-256; a serving certificate
 * has subjectAltName only, a CA basicConstraints `CA:TRUE` only.
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
import { isIP } from 'node:net'

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
/** basicConstraints (OID 2.5.29.19), critical, `cA TRUE` (RFC 5280 §4.2.1.9): what makes a CA. */
const CA_TRUE = seq(hex('0603551d13'), hex('0101ff'), tlv(0x04, seq(hex('0101ff'))))

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

/** UTCTime `YYMMDDHHMMSSZ` (RFC 5280 §4.1.2.5.1: years before 2050). */
function utcTime(ms: number): Buffer {
  const iso = new Date(ms).toISOString()
  const t = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
  return tlv(0x17, Buffer.from(t, 'ascii'))
}

/** What {@link issueCertificate} makes. */
export interface CertificateOptions {
  /** DNS names and IPv4 addresses (subjectAltName); the first is also the subject CN unless `commonName` is given. Default {@link SELF_SIGNED_HOSTS}; unused for a CA. */
  hosts?: readonly string[]
  /** The subject CN. */
  commonName?: string
  /** Make a CA (basicConstraints `CA:TRUE`, no subjectAltName). */
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
 * random 127-bit serial: self-signed, or signed by `issuer` (its issuer name is the CA's CN).
 */
export function issueCertificate(o: CertificateOptions = {}): CertificatePair {
  const hosts = o.hosts ?? SELF_SIGNED_HOSTS
  const now = o.now ?? Date.now()
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x40 // positive, no leading zero octet
  const dn = (cn: string) => seq(tlv(0x31, seq(COMMON_NAME, tlv(0x0c, Buffer.from(cn)))))
  const name = dn(o.commonName ?? hosts[0] ?? 'localhost')
  const altNames = hosts.map((h) =>
    isIP(h) === 4 ? tlv(0x87, Buffer.from(h.split('.').map(Number))) : tlv(0x82, Buffer.from(h, 'ascii')),
  )
  const from = now - SELF_SIGNED_BACKDATE_MS
  const issuer = o.issuer ? new X509Certificate(o.issuer.cert) : undefined
  const tbs = seq(
    hex('a003020102'), // [0] version v3
    tlv(0x02, serial),
    ECDSA_SHA256,
    issuer ? dn(issuer.subject.replace(/^CN=/, '')) : name,
    seq(utcTime(from), utcTime(from + (o.validityMs ?? SELF_SIGNED_VALIDITY_MS))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        o.isCA ? CA_TRUE : seq(SUBJECT_ALT_NAME, tlv(0x04, seq(...altNames))),
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
 * A new key pair and a certificate for `hosts` (DNS names and IPv4 addresses, the first also the subject
 * CN), valid {@link SELF_SIGNED_VALIDITY_MS} from `now` − one hour ({@link SELF_SIGNED_BACKDATE_MS}), with a
 * random 127-bit serial. Clients cannot verify it against any CA: scrapers either skip verification or
 * are given real certificate files.
 */
export function selfSignedCertificate(
  hosts: readonly string[] = SELF_SIGNED_HOSTS,
  now: number = Date.now(),
): CertificatePair {
  return issueCertificate({ hosts, now })
}
