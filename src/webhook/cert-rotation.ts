/**
 * @module cert-rotation — what the webhook certificate controller does next, decided from the Secret's
 * contents and the time alone (OPA cert-controller's rotator, made a pure step). Pure but for parsing.
 *
 * The Secret holds `ca.crt` (the trusted CAs, newest first: the `caBundle`), `ca.key` (the newest CA's
 * key), `tls.crt` and `tls.key` (the serving pair). A CA is replaced in two steps, so that no client ever
 * holds a bundle that does not trust the certificate served: first the new CA joins the bundle (the
 * serving certificate, signed by the old CA, stays), then, once every apiserver has had time to see the
 * new bundle, a serving certificate signed by the new CA is issued.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import { SELF_SIGNED_BACKDATE_MS } from '../tls/self-signed-cert.ts'

const DAY_MS = 86_400_000
/** CA lifetime: 10 years, OPA cert-controller's (`certValidityDuration`); a CA that rarely changes keeps the bundle stable. */
export const WEBHOOK_CA_VALIDITY_MS = 3650 * DAY_MS
/** Serving certificate lifetime: one year (client-go's self-signed certificates); its key sits in a Secret, so it is shorter than the CA's. */
export const WEBHOOK_CERT_VALIDITY_MS = 365 * DAY_MS
/**
 * Renew a certificate (CA or serving) this long before it expires: 90 days, OPA cert-controller's
 * lookahead. An operator down for weeks still wakes up to a valid certificate and renews it.
 */
export const WEBHOOK_CERT_RENEW_BEFORE_MS = 90 * DAY_MS
/**
 * How long a new CA sits in the bundle before a certificate it signed is served: 5 min. The apiservers
 * see a patched webhook configuration through their watch within seconds; the rest is margin for a slow
 * HA control plane. Far inside {@link WEBHOOK_CERT_RENEW_BEFORE_MS}.
 */
export const WEBHOOK_CA_PROPAGATION_MS = 5 * 60_000
/**
 * How often each replica re-reads the Secret and re-checks the webhook configurations' `caBundle`:
 * 10 min. Replicas that did not write a new pair pick it up by then (the old one stays valid and
 * trusted meanwhile), and a `caBundle` reset by a re-applied manifest is patched back.
 */
export const WEBHOOK_CERT_CHECK_INTERVAL_MS = 10 * 60_000

/** The Secret's data, decoded (PEM text). */
export interface WebhookCertData {
  /** The CA bundle, newest first. */
  'ca.crt'?: string
  /** The newest CA's private key. */
  'ca.key'?: string
  /** The serving certificate. */
  'tls.crt'?: string
  /** The serving key. */
  'tls.key'?: string
}

/** Overrides of the timing constants (tests shorten them). */
export interface CertTiming {
  /** Default {@link WEBHOOK_CA_VALIDITY_MS}. */
  caValidityMs?: number
  /** Default {@link WEBHOOK_CERT_VALIDITY_MS}. */
  certValidityMs?: number
  /** Default {@link WEBHOOK_CERT_RENEW_BEFORE_MS}. */
  renewBeforeMs?: number
  /** Default 5 minutes ({@link WEBHOOK_CA_PROPAGATION_MS}). */
  propagationMs?: number
  /** Default {@link WEBHOOK_CERT_CHECK_INTERVAL_MS}. */
  checkIntervalMs?: number
}

/**
 * The next step: `new-ca` (no usable CA: a new CA and serving pair replace everything), `add-ca` (the
 * CA expires within the renewal window: a new one joins the bundle), `new-serving` (issue a serving
 * pair from the newest CA), or `keep` until `wakeAt`.
 */
export type CertStep =
  | { kind: 'new-ca' | 'add-ca' | 'new-serving' }
  | { kind: 'keep' /** When to look again (ms since the epoch). */; wakeAt: number }

/** The PEM certificates of a bundle, in order. */
export const pemCertificates = (bundle: string | undefined): string[] =>
  bundle?.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n?/g) ?? []

const parse = (pem: string | undefined): X509Certificate | undefined => {
  try {
    return pem ? new X509Certificate(pem) : undefined
  } catch {
    return undefined
  }
}
const keyMatches = (x: X509Certificate, key: string | undefined): boolean => {
  try {
    return !!key && x.checkPrivateKey(createPrivateKey(key))
  } catch {
    return false
  }
}
/** When `x` expires (ms), as OpenSSL reads it: UTCTime and GeneralizedTime alike (RFC 5280 §4.1.2.5). */
export const notAfter = (x: X509Certificate): number => x.validToDate.getTime()

/** Decides the next step for `data` serving `hosts` at `now`. */
export function certStep(
  data: WebhookCertData,
  hosts: readonly string[],
  now: number,
  t: CertTiming = {},
): CertStep {
  const renewBefore = t.renewBeforeMs ?? WEBHOOK_CERT_RENEW_BEFORE_MS
  const cas = pemCertificates(data['ca.crt']).map(parse)
  const ca = cas[0]
  if (!ca?.ca || !keyMatches(ca, data['ca.key']) || notAfter(ca) <= now) return { kind: 'new-ca' }
  if (notAfter(ca) - now < renewBefore) return { kind: 'add-ca' }
  const leaf = parse(data['tls.crt'])
  const issuer = leaf && cas.find((c) => c && leaf.checkIssued(c) && leaf.verify(c.publicKey))
  const usable =
    issuer &&
    keyMatches(leaf, data['tls.key']) &&
    notAfter(leaf) - now >= renewBefore &&
    hosts.every((h) => (isIP(h) ? leaf.checkIP(h) : leaf.checkHost(h, { wildcards: false })))
  if (!usable) return { kind: 'new-serving' }
  const wakeAt = Math.min(
    now + (t.checkIntervalMs ?? WEBHOOK_CERT_CHECK_INTERVAL_MS),
    notAfter(leaf) - renewBefore,
  )
  if (issuer === ca) return { kind: 'keep', wakeAt }
  // Signed by an older CA still in the bundle: switch once the newest has propagated.
  const trustedAt =
    ca.validFromDate.getTime() + SELF_SIGNED_BACKDATE_MS + (t.propagationMs ?? WEBHOOK_CA_PROPAGATION_MS)
  return trustedAt <= now ? { kind: 'new-serving' } : { kind: 'keep', wakeAt: Math.min(wakeAt, trustedAt) }
}
