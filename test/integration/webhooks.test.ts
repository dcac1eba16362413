/**
 * Admission webhooks on the real apiserver, which calls them over TLS: a WebhookServer on 127.0.0.1
 * with a certificate from the WebhookCertController's own CA (kept in a Secret, the `caBundle` patched
 * into the configurations by the controller), configurations with `clientConfig.url`, each scoped by
 * a namespaceSelector to this file's namespaces so other tests never see them.
 *
 * Shows: the AppService validation denies with its message, the label default is in the stored object,
 * dry-run requests are admitted the same way and persist nothing, a malformed review gets a 400, a
 * throwing handler denies (validating) or fails the call (mutating) and is counted, an unreachable
 * webhook refuses writes with `failurePolicy: Fail` and lets them through with `Ignore`, and a CA
 * rotation in mid-test keeps admission working. Prints the latency the webhooks add.
 */
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { request } from 'node:https'
import { test } from 'node:test'
import { connect } from 'node:tls'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { RECONCILE_TIME_BUCKETS } from '../../src/metrics/reconcile-metrics.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { MUTATE_PATH, VALIDATE_PATH } from '../../src/operators/appservice/deployment-names.ts'
import { appServiceWebhooks, NAME_LABEL } from '../../src/operators/appservice/webhooks.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePort } from '../../src/testing/ports.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { WebhookCertController } from '../../src/webhook/cert-controller.ts'
import { pemCertificates } from '../../src/webhook/cert-rotation.ts'
import { WebhookServer } from '../../src/webhook/webhook-server.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
const registry = new MetricsRegistry()
const server = new WebhookServer({ registry })
const abort = new AbortController()
let admin: KubeClient
let certs: WebhookCertController
let port: number
/** Namespaces: AppService webhooks; throwing handlers; unreachable webhook, Fail and Ignore; no webhooks; depth recorded. */
const ns = { app: '', boom: '', fail: '', ignore: '', plain: '', deep: '' }
/** The nesting depth of each object the depth-recording webhook received. */
const depthsSeen: number[] = []
/** Nesting depth of a JSON value (`{}` is 1), without recursion. */
function depthOf(value: unknown): number {
  let max = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length) {
    const [v, d] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    max = Math.max(max, d + 1)
    for (const child of Object.values(v)) stack.push([child, d + 1])
  }
  return max
}
const id = `${process.pid}-${Date.now() % 100_000}`
const CONFIG = `edgeop-webhooks-test-${id}`
const SECRET = 'webhook-cert'
/** A new CA's serving certificate is taken this long after the CA joined the bundle (production: 5 min). */
const PROPAGATION_MS = 1_500

const ADMISSION = 'admissionregistration.k8s.io'
const type = (kind: string) => ({
  group: ADMISSION,
  version: 'v1',
  resource: `${kind.toLowerCase()}s`,
  namespaced: false,
  kind,
})
const VWC = type('ValidatingWebhookConfiguration')
const MWC = type('MutatingWebhookConfiguration')

/** One webhook for AppService writes in namespace `namespace`, called at `url`. */
const webhook = (name: string, namespace: string, url: string, failurePolicy: 'Fail' | 'Ignore') => ({
  name: `${name}.webhooks.test.edgeop.io`,
  admissionReviewVersions: ['v1'],
  clientConfig: { url },
  rules: [
    {
      apiGroups: [APPSERVICES.group],
      apiVersions: ['*'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['appservices'],
    },
  ],
  failurePolicy,
  sideEffects: 'None',
  timeoutSeconds: 5,
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
})

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
  for (const k of Object.keys(ns) as (keyof typeof ns)[]) ns[k] = await env().createNamespace(`wh-${k}`)

  appServiceWebhooks().register(server, undefined)
  server
    .validate('/throw-validate', () => {
      throw new Error('validator broke')
    })
    .mutate('/throw-mutate', () => {
      throw new Error('defaulter broke')
    })
    .validate('/record-depth', (r) => {
      depthsSeen.push(depthOf(r.object))
      return undefined
    })
  port = await freePort()
  const dead = await freePort() // nothing listens there: the webhook is down
  const at = (path: string, p = port) => `https://127.0.0.1:${p}${path}`
  const validating = {
    apiVersion: `${ADMISSION}/v1`,
    kind: VWC.kind,
    metadata: { name: CONFIG },
    webhooks: [
      webhook('validate', ns.app, at(VALIDATE_PATH), 'Fail'),
      webhook('boom', ns.boom, at('/throw-validate'), 'Fail'),
      webhook('down-fail', ns.fail, at(VALIDATE_PATH, dead), 'Fail'),
      webhook('down-ignore', ns.ignore, at(VALIDATE_PATH, dead), 'Ignore'),
      webhook('record-depth', ns.deep, at('/record-depth'), 'Fail'),
    ],
  }
  const mutating = {
    apiVersion: `${ADMISSION}/v1`,
    kind: MWC.kind,
    metadata: { name: CONFIG },
    webhooks: [
      { ...webhook('default', ns.app, at(MUTATE_PATH), 'Fail'), reinvocationPolicy: 'Never' },
      webhook('boom-mutate', ns.boom, at('/throw-mutate'), 'Fail'),
    ],
  }
  await admin.resource(VWC).create(validating as KubeObject)
  await admin.resource(MWC).create(mutating as KubeObject)
  defer(
    () => admin.resource(VWC).delete(CONFIG),
    () => admin.resource(MWC).delete(CONFIG),
  )

  certs = new WebhookCertController({
    client: admin,
    namespace: ns.app,
    secretName: SECRET,
    hosts: ['127.0.0.1'],
    validating: [CONFIG],
    mutating: [CONFIG],
    onCertificate: (pair) => server.setCertificate(pair),
    timing: { propagationMs: PROPAGATION_MS, checkIntervalMs: 300 },
  })
  await server.start(`127.0.0.1:${port}`, await certs.sync())
  defer(
    () => server.close(),
    () => abort.abort(),
  )
  void certs.run(abort.signal)
  // The apiserver sees the patched caBundle through its watch: wait until a write is admitted.
  await eventually(
    async () => {
      await apps(ns.app).create(app('warm-up'), { dryRun: true })
      return true
    },
    { timeoutMs: 20_000, what: 'webhooks reachable with the managed CA' },
  )
})

const apps = (namespace: string) => admin.resource(APPSERVICES, namespace)
const app = (name: string, image = 'nginx:1.27', labels?: Record<string, string>) =>
  ({ metadata: { name, ...(labels ? { labels } : {}) }, spec: { image } }) as unknown as AppService

/** The error a write was refused with. */
async function refusal(write: Promise<unknown>): Promise<ApiError> {
  const err = await write.then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  )
  assert.ok(err instanceof ApiError, String(err))
  return err
}
const count = (webhook: string, outcome: string) =>
  registry
    .counter({ name: 'edgeop_webhook_requests_total', help: '', labelNames: ['webhook', 'outcome'] })
    .get({ webhook, outcome })

test('the certificate controller keeps its CA and serving pair in a Secret and the caBundle in both configurations', async () => {
  const secret = (await admin.resource(CORE_TYPES.secrets, ns.app).get(SECRET)) as KubeObject & {
    type: string
    data: Record<string, string>
  }
  assert.equal(secret.type, 'kubernetes.io/tls')
  assert.deepEqual(Object.keys(secret.data).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'])
  const bundle = Buffer.from(certs.caBundle).toString('base64')
  for (const t of [VWC, MWC]) {
    const c = (await admin.resource(t).get(CONFIG)) as KubeObject & {
      webhooks: { clientConfig: { caBundle?: string } }[]
    }
    assert.ok(
      c.webhooks.every((w) => w.clientConfig.caBundle === bundle),
      t.kind,
    )
  }
})

test('validation denies an image reference the operator cannot use, with its message; a valid one is stored', async () => {
  const err = await refusal(apps(ns.app).create(app('bad-image', 'Not An/Image!')))
  assert.equal(err.status, 422)
  assert.match(
    err.message,
    /admission webhook "validate\.webhooks\.test\.edgeop\.io" denied the request: spec\.image "Not An\/Image!" is not a valid image reference/,
  )
  await apps(ns.app).create(app('good-image'))
  assert.ok(count(VALIDATE_PATH, 'denied') >= 1)
})

test('mutation: the app.kubernetes.io/name default is in the stored object, a label the user set is kept', async () => {
  await apps(ns.app).create(app('web'))
  assert.equal((await apps(ns.app).get('web')).metadata.labels?.[NAME_LABEL], 'web')
  await apps(ns.app).create(app('named', 'nginx:1.27', { [NAME_LABEL]: 'shop' }))
  assert.equal((await apps(ns.app).get('named')).metadata.labels?.[NAME_LABEL], 'shop')
  assert.ok(count(MUTATE_PATH, 'patched') >= 1)
})

test('dry-run writes are admitted the same way (denied, or mutated in the answer) and store nothing', async () => {
  const dry = await apps(ns.app).create(app('dry'), { dryRun: true })
  assert.equal(dry.metadata.labels?.[NAME_LABEL], 'dry')
  await assert.rejects(apps(ns.app).get('dry'), (e: unknown) => e instanceof ApiError && e.status === 404)
  const err = await refusal(apps(ns.app).create(app('dry-bad', 'UPPER'), { dryRun: true }))
  assert.match(err.message, /is not a valid image reference/)
})

test('a malformed AdmissionReview gets a 400 with a message, and the server keeps serving', async () => {
  const post = (body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const r = request(
        { host: '127.0.0.1', port, method: 'POST', path: VALIDATE_PATH, ca: certs.caBundle, agent: false },
        (res) => {
          let text = ''
          res.on('data', (d) => {
            text += d
          })
          res.on('end', () => resolve({ status: res.statusCode!, text }))
        },
      )
      r.on('error', reject)
      r.end(body)
    })
  assert.deepEqual(await post('{"kind":"AdmissionReview"'), {
    status: 400,
    text: 'the body is not a JSON object\n',
  })
  const wrong = await post(
    JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }),
  )
  assert.equal(wrong.status, 400)
  assert.match(wrong.text, /expected an admission\.k8s\.io\/v1 AdmissionReview/)
  await apps(ns.app).create(app('after-malformed'), { dryRun: true })
})

test('D2 through the apiserver: 2,000 nested objects under an unknown spec field are pruned before admission; under managedFields they reach the webhook, which denies them unparsed, in words, and keeps serving', async (t) => {
  const nested = (levels: number) => JSON.parse(`${'{"f:a":'.repeat(levels)}{}${'}'.repeat(levels)}`)
  const create = async (name: string, extra: { spec?: object; managedFields?: object[] }) => {
    const seen = depthsSeen.length
    const refused = count('/record-depth', 'bad_request')
    const object = {
      metadata: { name, ...(extra.managedFields ? { managedFields: extra.managedFields } : {}) },
      spec: { image: 'nginx:1.27', ...extra.spec },
    } as unknown as AppService
    const outcome = await apps(ns.deep)
      .create(object, { dryRun: true })
      .then(
        () => 'admitted',
        (e: unknown) => (e instanceof ApiError ? `refused ${e.status}: ${e.message.slice(-120)}` : String(e)),
      )
    const result = {
      outcome,
      parsed: depthsSeen.slice(seen),
      tooDeep: count('/record-depth', 'bad_request') - refused,
    }
    t.diagnostic(`${name}: ${JSON.stringify(result)}`)
    return result
  }
  // A user who may create AppServices: the CRD has no x-kubernetes-preserve-unknown-fields, so the
  // apiserver prunes the field, and the webhook sees the object at its schema's depth.
  const unknownField = await create('deep-spec', { spec: { extra: nested(2000) } })
  assert.equal(unknownField.outcome, 'admitted')
  assert.equal(unknownField.tooDeep, 0)
  assert.ok(
    unknownField.parsed.every((d) => d < 20),
    `pruned: ${unknownField.parsed}`,
  )
  // managedFields' fieldsV1 is kept as raw JSON: the depth reaches the webhook.
  const fields = [
    {
      manager: 'deep',
      operation: 'Update',
      apiVersion: 'platform.example.com/v1alpha1',
      fieldsType: 'FieldsV1',
      fieldsV1: nested(2000),
    },
  ]
  const managed = await create('deep-managed-fields', { managedFields: fields })
  assert.deepEqual(managed.parsed, [], 'never parsed')
  assert.equal(managed.tooDeep, 1, 'the review reached the webhook and was refused before parsing')
  assert.match(
    managed.outcome,
    /^refused 400: .*denied the request: the review nests deeper than 512 levels/,
    'the user is told why',
  )
  await apps(ns.app).create(app('after-deep'), { dryRun: true })
})

test('a throwing handler: validating denies with its message, mutating fails the call (failurePolicy Fail); both counted', async () => {
  const err = await refusal(apps(ns.boom).create(app('boom')))
  assert.match(err.message, /webhook \/throw-(validate|mutate) failed/)
  // Mutating webhooks run first: its 500 refuses the write under failurePolicy Fail.
  assert.match(err.message, /failed calling webhook "boom-mutate\.webhooks\.test\.edgeop\.io"/)
  assert.ok(count('/throw-mutate', 'error') >= 1)
  // Without the mutating one (dry-run through a configuration of the validating webhook only).
  await admin.resource(MWC).patch(CONFIG, [{ op: 'remove', path: '/webhooks/1' }], 'json')
  const denied = await eventually(
    async () => {
      const e = await refusal(apps(ns.boom).create(app('boom-2')))
      return /denied the request: webhook \/throw-validate failed: validator broke/.test(e.message)
        ? e
        : undefined
    },
    { timeoutMs: 10_000, what: 'the validating webhook denies' },
  )
  assert.equal(denied.status, 500)
  assert.ok(count('/throw-validate', 'error') >= 1)
})

test('with the webhook down, failurePolicy Fail refuses writes and Ignore lets them through', async () => {
  const err = await refusal(apps(ns.fail).create(app('refused')))
  assert.match(err.message, /failed calling webhook "down-fail\.webhooks\.test\.edgeop\.io"/)
  await assert.rejects(
    apps(ns.fail).get('refused'),
    (e: unknown) => e instanceof ApiError && e.status === 404,
  )
  await apps(ns.ignore).create(app('accepted', 'Not An/Image!'))
  assert.equal((await apps(ns.ignore).get('accepted')).spec.image, 'Not An/Image!')
})

test('CA rotation mid-test: the new CA joins the caBundle, then serves; admission keeps working throughout', async () => {
  const served = () =>
    new Promise<string>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, ca: certs.caBundle, servername: undefined }, () => {
        resolve(s.getPeerX509Certificate()!.fingerprint256)
        s.end()
      })
      s.on('error', reject)
    })
  const before = await served()
  const oldCa = pemCertificates(certs.caBundle)[0]!
  await certs.rotate()
  const bundle = pemCertificates(certs.caBundle)
  assert.equal(bundle.length, 2)
  assert.equal(bundle[1], oldCa)
  assert.equal(await served(), before, 'the old serving pair stays until the new CA has propagated')
  let writes = 0
  const admitted = async () => {
    const o = await apps(ns.app).create(app(`rot-${writes++}`), { dryRun: true })
    assert.equal(o.metadata.labels?.[NAME_LABEL], `rot-${writes - 1}`)
    await refusal(apps(ns.app).create(app(`rot-bad-${writes}`, 'BAD'), { dryRun: true }))
  }
  await admitted()
  // The run loop issues a serving pair from the new CA once PROPAGATION_MS have passed.
  await eventually(
    async () => {
      await admitted()
      return (await served()) !== before
    },
    { timeoutMs: 15_000, what: 'a serving certificate of the new CA' },
  )
  const leaf = new X509Certificate(
    Buffer.from(
      (
        (await admin.resource(CORE_TYPES.secrets, ns.app).get(SECRET)) as KubeObject & {
          data: Record<string, string>
        }
      ).data['tls.crt']!,
      'base64',
    ),
  )
  assert.ok(leaf.checkIssued(new X509Certificate(bundle[0]!)), 'signed by the new CA')
  assert.equal(await served(), leaf.fingerprint256)
  for (let i = 0; i < 5; i++) await admitted()
})

test('latency the webhooks add per admission request (dry-run creates, with both webhooks vs none)', async (t) => {
  const N = 300
  const time = async (namespace: string) => {
    const ms: number[] = []
    for (let i = 0; i < N; i++) {
      const started = performance.now()
      await apps(namespace).create(app(`lat-${i}`), { dryRun: true })
      ms.push(performance.now() - started)
    }
    ms.sort((a, b) => a - b)
    return { median: ms[Math.floor(N / 2)]!, p99: ms[Math.floor(N * 0.99)]! }
  }
  await time(ns.plain) // warm both paths
  const plain = await time(ns.plain)
  const hooked = await time(ns.app)
  const server = registry
    .histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: '',
      labelNames: ['webhook'],
      buckets: RECONCILE_TIME_BUCKETS,
    })
    .get({ webhook: VALIDATE_PATH })
  const line = `webhook latency over ${N} dry-run creates: without ${plain.median.toFixed(2)} ms median / ${plain.p99.toFixed(2)} ms p99; with validating+mutating ${hooked.median.toFixed(2)} ms / ${hooked.p99.toFixed(2)} ms; added ${(hooked.median - plain.median).toFixed(2)} ms median, ${(hooked.p99 - plain.p99).toFixed(2)} ms p99; handler time in the server ${((server.sum / server.count) * 1000).toFixed(3)} ms mean`
  t.diagnostic(line)
  process.stdout.write(`${line}\n`)
  assert.ok(hooked.median > 0 && plain.median > 0)
})
