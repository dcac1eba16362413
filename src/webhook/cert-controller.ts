/**
 * @module cert-controller — the webhook's certificates where cert-manager is absent (OPA's
 * cert-controller): a CA and a serving pair kept in a Secret, renewed before they expire
 * ({@link certStep}), the CA bundle patched into the webhook configurations (and CRD conversion
 * sections) it owns by name, and the serving pair handed to the server without a restart.
 *
 * Every replica runs it: writes carry the Secret's `resourceVersion`, so when two replicas renew at
 * once one wins and the other takes the winner's pair.
 */
import { randomBytes, X509Certificate } from 'node:crypto'
// From their files, not the client barrel, which would load the whole client for a table and predicates
// (the KubeClient a user passes in brings the rest).
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../client/resource.ts'
import {
  type Clock,
  EdgeopError,
  errorMessage,
  type KubeObject,
  type Logger,
  noopLogger,
  realClock,
  sleep,
} from '../core/index.ts'
import { type CertificatePair, issueCertificate } from '../tls/index.ts'
import { isAlreadyExists, isConflict, isNotFound } from '../transport/api-error.ts'
import {
  type CertStep,
  type CertTiming,
  certStep,
  notAfter,
  pemCertificates,
  WEBHOOK_CA_VALIDITY_MS,
  WEBHOOK_CERT_RENEW_BEFORE_MS,
  WEBHOOK_CERT_VALIDITY_MS,
  type WebhookCertData,
} from './cert-rotation.ts'

/**
 * After a failed pass (apiserver unreachable, RBAC missing, a certificate unusable as issued), try
 * again in 10 s: the served pair stays meanwhile, and a failure that repeats costs one pass, and no
 * write, per interval.
 */
export const WEBHOOK_CERT_RETRY_MS = 10_000

/**
 * Whether `next`, the step {@link certStep} gives for what `done` just issued, is a settled state:
 * `keep`, or, after a new CA joined the bundle, a serving pair from it (a second, last pass). Any other
 * step means a certificate is unusable the moment it is made (a time that reads back wrong, a validity
 * shorter than the renewal window), and writing it would only start the same renewal again.
 */
const settles = (done: CertStep['kind'], next: CertStep['kind']): boolean =>
  next === 'keep' || (done === 'add-ca' && next === 'new-serving')

const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`

const admissionType = (kind: string, resource: string): ResourceType => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource,
  namespaced: false,
  kind,
})
const VALIDATING = admissionType('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations')
const MUTATING = admissionType('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations')
const CRDS = CORE_TYPES.customResourceDefinitions
const KEYS = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'] as const

/** Options of {@link WebhookCertController}. */
export interface WebhookCertControllerOptions {
  /** Reads and writes the Secret, patches the configurations. */
  client: KubeClient
  /** The Secret's namespace (the operator's). */
  namespace: string
  /** The Secret's name. */
  secretName: string
  /** Names the serving certificate is for: `<service>.<namespace>.svc` (and, in tests, `127.0.0.1`). */
  hosts: readonly string[]
  /** ValidatingWebhookConfigurations whose every webhook gets the bundle. */
  validating?: readonly string[]
  /** MutatingWebhookConfigurations whose every webhook gets the bundle. */
  mutating?: readonly string[]
  /**
   * CRDs whose `spec.conversion.webhook` gets the bundle (when their strategy is `Webhook`), and, when
   * it calls a Service of another namespace, `namespace` as the Service's.
   */
  crds?: readonly string[]
  /** Called with each new serving pair (first at the first {@link WebhookCertController.sync}). */
  onCertificate(pair: CertificatePair): void
  /** Shorter timings for tests. */
  timing?: CertTiming
  /** Default: real time. */
  clock?: Clock
  /** Renewals at info, failures at warn (names and fingerprints, never a key). Default: none. */
  logger?: Logger
}

/**
 * Keeps the webhook's CA and serving certificate.
 *
 * @example
 * const certs = new WebhookCertController({ client, namespace, secretName: 'op-webhook-cert',
 *   hosts: ['op-webhook.op-system.svc'], validating: ['op'], onCertificate: (p) => server.setCertificate(p) })
 * await server.start(':9443', await certs.sync())
 * void certs.run(signal)
 */
export class WebhookCertController {
  readonly #o: WebhookCertControllerOptions
  readonly #clock: Clock
  readonly #log: Logger
  #served: CertificatePair | undefined
  #bundle = ''

  /** Nothing happens until {@link sync} or {@link run}. */
  constructor(options: WebhookCertControllerOptions) {
    this.#o = options
    this.#clock = options.clock ?? realClock
    this.#log = options.logger ?? noopLogger
  }

  /** The CA bundle (PEM, newest first) last seen in the Secret. */
  get caBundle(): string {
    return this.#bundle
  }

  /**
   * One pass: reads the Secret, writes what {@link certStep} says (`rotate`: a new CA joins the bundle
   * now, as if the CA were expiring), patches the bundle where it differs, hands a changed serving pair
   * to `onCertificate`. Resolves with the pair served and when to pass again.
   *
   * @throws the client's error when the Secret cannot be read or written, or a configuration patched;
   * EdgeopError `EDGEOP_ERR_INVALID` (step `check issued webhook certificate`), before any write, when
   * what it issued would need renewing at once (a time that reads back wrong, a validity shorter than
   * the renewal window); {@link run} retries it after {@link WEBHOOK_CERT_RETRY_MS}.
   */
  async sync(rotate = false): Promise<CertificatePair & { wakeAt: number }> {
    const { client, namespace, secretName: name } = this.#o
    const secrets = client.resource(CORE_TYPES.secrets, namespace)
    for (let attempt = 0; ; attempt++) {
      let secret: KubeObject & { data?: Record<string, string> } = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace },
      }
      try {
        secret = await secrets.get(name)
      } catch (err) {
        if (!isNotFound(err)) throw err
      }
      const data: WebhookCertData = {}
      for (const k of KEYS) if (secret.data?.[k]) data[k] = Buffer.from(secret.data[k], 'base64').toString()
      const now = this.#clock.now()
      let step: CertStep = certStep(data, this.#o.hosts, now, this.#o.timing)
      if (rotate && step.kind !== 'new-ca') step = { kind: 'add-ca' }
      if (step.kind !== 'keep') {
        this.#renew(step.kind, data, now)
        const next = certStep(data, this.#o.hosts, now, this.#o.timing)
        if (!settles(step.kind, next.kind)) throw this.#unusable(step.kind, next.kind, data, now)
        secret.data = Object.fromEntries(KEYS.map((k) => [k, Buffer.from(data[k]!).toString('base64')]))
        try {
          // A Secret's type cannot change: one made before (e.g. Opaque) keeps its own.
          await (secret.metadata.resourceVersion
            ? secrets.update(secret)
            : secrets.create({ ...secret, type: 'kubernetes.io/tls' }))
        } catch (err) {
          // Another replica renewed first: take its pair on the next read.
          if (attempt < 2 && (isConflict(err) || isAlreadyExists(err))) continue
          throw err
        }
        this.#log.info('webhook certificate renewed', {
          step: step.kind,
          secret: name,
          sha256: new X509Certificate(data['tls.crt']!).fingerprint256,
        })
        rotate = false
        step = next
      }
      this.#bundle = data['ca.crt']!
      await this.#patchBundles(Buffer.from(this.#bundle).toString('base64'))
      const pair = { cert: data['tls.crt']!, key: data['tls.key']! }
      if (pair.cert !== this.#served?.cert) {
        this.#served = pair
        this.#o.onCertificate(pair)
      }
      return { ...pair, wakeAt: step.kind === 'keep' ? step.wakeAt : now }
    }
  }

  /** Forces a CA rotation now (the two steps of {@link certStep}); resolves after the first. */
  async rotate(): Promise<void> {
    await this.sync(true)
  }

  /** Passes at the times {@link sync} asks for until `signal` aborts; a failed pass is logged and retried. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let wakeAt: number
      try {
        wakeAt = (await this.sync()).wakeAt
      } catch (err) {
        this.#log.warn('webhook certificate pass failed', {
          secret: this.#o.secretName,
          error: errorMessage(err).slice(0, 300),
        })
        wakeAt = this.#clock.now() + WEBHOOK_CERT_RETRY_MS
      }
      await sleep(Math.max(0, wakeAt - this.#clock.now()), this.#clock, signal).catch(() => {})
    }
  }

  /** The error for certificates that need renewing again as soon as issued: their times as read back, and the limit. */
  #unusable(done: CertStep['kind'], next: CertStep['kind'], data: WebhookCertData, now: number): EdgeopError {
    const { namespace, secretName, timing } = this.#o
    const read = (pem: string | undefined) => (pem ? iso(notAfter(new X509Certificate(pem))) : 'none')
    const renewDays = (timing?.renewBeforeMs ?? WEBHOOK_CERT_RENEW_BEFORE_MS) / 86_400_000
    return new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `webhook certificate Secret ${namespace}/${secretName} not written: ${next} is due right after ${done} ` +
        `at ${iso(now)}; certificates must outlive the renewal window of ${renewDays} days (CA notAfter ` +
        `${read(pemCertificates(data['ca.crt'])[0])}, serving notAfter ${read(data['tls.crt'])})`,
      { step: 'check issued webhook certificate' },
    )
  }

  #renew(kind: CertStep['kind'], data: WebhookCertData, now: number): void {
    const t = this.#o.timing ?? {}
    if (kind !== 'new-serving') {
      const ca = issueCertificate({
        isCA: true,
        // Unique per CA (client-go's `<host>-ca@<unix time>`, plus random bits: two CAs can be made in
        // one second); the key identifiers also tell a bundle's CAs apart.
        commonName: `${this.#o.secretName}-ca@${Math.floor(now / 1000)}-${randomBytes(4).toString('hex')}`,
        validityMs: t.caValidityMs ?? WEBHOOK_CA_VALIDITY_MS,
        now,
      })
      // A new CA keeps the older ones still valid in the bundle: what they signed stays trusted.
      const older =
        kind === 'add-ca'
          ? pemCertificates(data['ca.crt']).filter((p) => notAfter(new X509Certificate(p)) > now)
          : []
      data['ca.crt'] = [ca.cert, ...older].join('')
      data['ca.key'] = ca.key
      if (kind === 'add-ca') return
    }
    const leaf = issueCertificate({
      hosts: this.#o.hosts,
      issuer: { cert: pemCertificates(data['ca.crt'])[0]!, key: data['ca.key']! },
      validityMs: t.certValidityMs ?? WEBHOOK_CERT_VALIDITY_MS,
      now,
    })
    data['tls.crt'] = leaf.cert
    data['tls.key'] = leaf.key
  }

  async #patchBundles(caBundle: string): Promise<void> {
    const { client } = this.#o
    const get = async (type: ResourceType, name: string) => {
      try {
        return await client.resource(type).get(name)
      } catch (err) {
        if (isNotFound(err)) return this.#log.debug('webhook configuration not installed', { name })
        throw err
      }
    }
    for (const [type, names] of [
      [VALIDATING, this.#o.validating],
      [MUTATING, this.#o.mutating],
    ] as const) {
      for (const name of names ?? []) {
        const webhooks =
          (
            (await get(type, name)) as
              | { webhooks?: { name: string; clientConfig?: { caBundle?: string } }[] }
              | undefined
          )?.webhooks ?? []
        // `test` on each name: a list reordered since the read fails the patch instead of misplacing it.
        const ops = webhooks.flatMap((w, i) =>
          w.clientConfig?.caBundle === caBundle
            ? []
            : [
                { op: 'test' as const, path: `/webhooks/${i}/name`, value: w.name },
                { op: 'add' as const, path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
              ],
        )
        if (ops.length) await client.resource(type).patch(name, ops, 'json')
      }
    }
    for (const name of this.#o.crds ?? []) {
      const conversion = (
        (await get(CRDS, name)) as
          | {
              spec?: {
                conversion?: {
                  strategy?: string
                  webhook?: { clientConfig?: { caBundle?: string; service?: { namespace?: string } } }
                }
              }
            }
          | undefined
      )?.spec?.conversion
      const cc = conversion?.webhook?.clientConfig
      // A CRD installed from a static file (Helm's crds/) names the default namespace: the Service is in ours.
      const service = cc?.service && cc.service.namespace !== this.#o.namespace
      if (conversion?.strategy === 'Webhook' && (cc?.caBundle !== caBundle || service))
        await client.resource(CRDS).patch(name, {
          spec: {
            conversion: {
              webhook: {
                clientConfig: { caBundle, ...(service ? { service: { namespace: this.#o.namespace } } : {}) },
              },
            },
          },
        })
    }
  }
}
