/** @module tls — self-signed certificates for serving, and a watcher that reloads a certificate pair from disk. */
export {
  CERT_RELOAD_INTERVAL_MS,
  type CertWatcher,
  type CertWatcherOptions,
  DEFAULT_CERT_NAME,
  DEFAULT_KEY_NAME,
  watchCertificate,
} from './cert-watcher.ts'
export {
  type CertificateOptions,
  type CertificatePair,
  issueCertificate,
  SELF_SIGNED_HOSTS,
  SELF_SIGNED_VALIDITY_MS,
  selfSignedCertificate,
} from './self-signed-cert.ts'
