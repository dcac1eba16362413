/**
 * @module cert-watcher — a serving certificate read from files and re-read when they change, so a
 * rotated certificate (cert-manager renewing a Secret mounted as a volume) is served without a
 * restart (controller-runtime's `certwatcher`).
 *
 * Polls: a Secret volume is updated by swapping a symlink, which file watches miss on some
 * filesystems; reading two small files every few seconds costs nothing.
 */
import { X509Certificate } from 'node:crypto'
import { join } from 'node:path'
import { readBoundedText } from '../core/bounded-file.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { nodeTls } from '../core/node-builtins.ts'
import type { CertificatePair } from './self-signed-cert.ts'

/** File name of the certificate in the directory (kubebuilder's `--metrics-cert-name` default; a `kubernetes.io/tls` Secret's key). */
export const DEFAULT_CERT_NAME = 'tls.crt'
/** File name of the private key (kubebuilder's `--metrics-cert-key` default; a `kubernetes.io/tls` Secret's key). */
export const DEFAULT_KEY_NAME = 'tls.key'
/**
 * How often the files are re-read: 10 s, controller-runtime certwatcher's polling interval
 * (`defaultWatchInterval`). The kubelet refreshes Secret volumes every sync period (about a minute),
 * so this adds at most 10 s to a rotation.
 */
export const CERT_RELOAD_INTERVAL_MS = 10_000

/** Where the certificate is, and how to watch it. */
export interface CertWatcherOptions {
  /** The directory holding both files. */
  dir: string
  /** Default {@link DEFAULT_CERT_NAME}. */
  certName?: string
  /** Default {@link DEFAULT_KEY_NAME}. */
  keyName?: string
  /** Default {@link CERT_RELOAD_INTERVAL_MS}. */
  intervalMs?: number
  /** Default: real time. */
  clock?: Clock
  /** A reload at info, a bad pair at warn (file names and fingerprints only). Default: none. */
  logger?: Logger
}

/** A watched certificate. */
export interface CertWatcher {
  /** The pair currently served. */
  readonly current: CertificatePair
  /** Re-reads the files now; resolves true when a new, valid pair was taken. */
  reload(): Promise<boolean>
  /** Stops polling. */
  stop(): void
}

/**
 * Cap of the serving certificate and key files: 1 MiB. A certificate chain and its key are a few KiB
 * (cert-manager's Secrets, 2026); the cap keeps a wrong path (a device, a log) from being read whole
 * on every poll.
 */
export const MAX_SERVING_PEM_BYTES = 1024 * 1024

/**
 * Reads the pair, checks it (the key must match the certificate) and polls for changes, calling
 * `onChange` with each new valid pair. A changed pair that does not load (a half-written rotation, a
 * key of another certificate) is logged and skipped: the old one stays in service and the next poll
 * tries again.
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` naming the file when the first read or check fails.
 */
export async function watchCertificate(
  options: CertWatcherOptions,
  onChange: (pair: CertificatePair) => void,
): Promise<CertWatcher> {
  const certPath = join(options.dir, options.certName ?? DEFAULT_CERT_NAME)
  const keyPath = join(options.dir, options.keyName ?? DEFAULT_KEY_NAME)
  const clock = options.clock ?? realClock
  const log = options.logger ?? noopLogger
  const read = async (): Promise<CertificatePair> => {
    const [cert, key] = await Promise.all([
      readBoundedText(certPath, { what: 'serving certificate', maxBytes: MAX_SERVING_PEM_BYTES }),
      readBoundedText(keyPath, { what: 'serving key', maxBytes: MAX_SERVING_PEM_BYTES }),
    ])
    // An empty certificate (a file caught mid-rewrite) passes createSecureContext: parse it first.
    new X509Certificate(cert)
    nodeTls().createSecureContext({ cert, key }) // throws when unparsable or when the key does not match
    return { cert, key }
  }
  let current: CertificatePair
  try {
    current = await read()
  } catch (cause) {
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `serving certificate ${certPath} with key ${keyPath}: ${errorMessage(cause).slice(0, 200)}`,
      { step: 'load certificate', cause },
    )
  }
  let cancel: (() => void) | undefined
  let stopped = false
  let inFlight: Promise<boolean> | undefined
  /** One read at a time: a reload asked for while the poll reads joins it. */
  const reload = (): Promise<boolean> =>
    (inFlight ??= readAndSwap().finally(() => {
      inFlight = undefined
    }))
  const readAndSwap = async (): Promise<boolean> => {
    let next: CertificatePair
    try {
      next = await read()
    } catch (err) {
      log.warn('serving certificate not reloaded', {
        cert: certPath,
        error: errorMessage(err).slice(0, 200),
      })
      return false
    }
    if (stopped || (next.cert === current.cert && next.key === current.key)) return false
    current = next
    onChange(next)
    log.info('serving certificate reloaded', {
      cert: certPath,
      sha256: new X509Certificate(next.cert).fingerprint256,
    })
    return true
  }
  const schedule = (): void => {
    cancel = clock.setTimer(() => {
      void reload().finally(() => {
        if (!stopped) schedule()
      })
    }, options.intervalMs ?? CERT_RELOAD_INTERVAL_MS)
  }
  schedule()
  return {
    get current() {
      return current
    },
    reload,
    stop: () => {
      stopped = true
      cancel?.()
    },
  }
}
