/**
 * @module webhooks — an operator's admission webhooks in its process: the handlers its spec registers,
 * served on `--webhook-bind-address` by every replica, with certificates from `--webhook-cert-dir`
 * (reloaded on change) or else kept by the operator itself in a Secret (`WebhookCertController`).
 */
import type { KubeClient } from '../client/index.ts'
import type { Logger } from '../core/index.ts'
import type { MetricsRegistry } from '../metrics/index.ts'
import { parseBindAddress } from '../server/index.ts'
import { watchCertificate } from '../tls/index.ts'
import { WebhookCertController, WebhookServer } from '../webhook/index.ts'

/** What an operator serves: `OperatorSpec.webhooks`. */
export interface OperatorWebhooks<C> {
  /** Registers the handlers (`server.validate(path, …)`, `server.mutate(path, …)`). */
  register(server: WebhookServer, context: C): void
  /** The Service the apiserver calls; the managed certificate is for `<service>.<namespace>.svc`. */
  service: string
  /** The Secret holding the managed CA and serving pair, in the operator's namespace. */
  secret: string
  /** ValidatingWebhookConfigurations whose `caBundle` the operator keeps (managed certificates only). */
  validating?: readonly string[]
  /** MutatingWebhookConfigurations whose `caBundle` the operator keeps. */
  mutating?: readonly string[]
  /** CRDs whose conversion webhook's `caBundle` the operator keeps. */
  crds?: readonly string[]
}

/**
 * Starts the webhooks of `spec` unless `bindAddress` is `"0"`; resolves with their stop function once
 * they listen.
 *
 * @throws the Secret's or the certificate files' error, or `EDGEOP_ERR_CONFIG` for a busy address.
 */
export async function startWebhooks<C>(
  spec: OperatorWebhooks<C>,
  context: C,
  o: { bindAddress: string; certDir?: string | undefined; client: KubeClient; namespace: string },
  registry: MetricsRegistry,
  logger: Logger,
): Promise<(() => Promise<void>) | undefined> {
  if (!parseBindAddress(o.bindAddress)) return undefined
  const server = new WebhookServer({ registry, logger })
  spec.register(server, context)
  const stopCerts = new AbortController()
  let stopWatch = () => {}
  let pair: { cert: string; key: string }
  if (o.certDir) {
    const w = await watchCertificate({ dir: o.certDir, logger }, (p) => server.setCertificate(p))
    stopWatch = () => w.stop()
    pair = w.current
  } else {
    const certs = new WebhookCertController({
      client: o.client,
      namespace: o.namespace,
      secretName: spec.secret,
      hosts: [`${spec.service}.${o.namespace}.svc`],
      validating: spec.validating,
      mutating: spec.mutating,
      crds: spec.crds,
      onCertificate: (p) => server.setCertificate(p),
      logger,
    })
    pair = await certs.sync()
    void certs.run(stopCerts.signal)
  }
  const address = await server.start(o.bindAddress, pair)
  logger.info('serving webhooks', { address, paths: server.paths })
  return () => {
    stopCerts.abort()
    stopWatch()
    return server.close()
  }
}
