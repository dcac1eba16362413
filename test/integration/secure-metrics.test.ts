/**
 * Secure metrics on the real apiserver: the ops server's HTTPS `/metrics` asks the apiserver about
 * every scrape (TokenReview, SubjectAccessReview) with an identity holding only deploy/'s
 * `edgeop-appservice-metrics-auth` rules. A ServiceAccount bound to deploy/'s `edgeop-metrics-reader`
 * scrapes; one without the binding gets 403; no token or a forged one 401. Rewritten certificate files
 * are served on the next connection without a restart.
 */
import assert from 'node:assert/strict'
import { randomBytes, X509Certificate } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { HealthChecks } from '../../src/health/health-checks.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { OPERATOR_NAME } from '../../src/operators/appservice/deployment-names.ts'
import { MetricsAuthFilter } from '../../src/server/metrics-auth.ts'
import { METRICS_CONTENT_TYPE, type OpsServer, startOpsServer } from '../../src/server/ops-server.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { selfSignedCertificate } from '../../src/tls/self-signed-cert.ts'
import { applyObjects, deployObjects, serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient, userClient } from '../support/kube.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { scrape } from '../support/scrape.ts'
import { useTestEnv } from '../support/test-env.ts'

const RBAC = 'rbac.authorization.k8s.io'
/** How often the test server re-reads its certificate files (production: 10 s). */
const RELOAD_MS = 100

const { env, setup, defer } = useTestEnv()
let admin: KubeClient
let ops: OpsServer
let url: string
let certDir: string
let readerToken: string
let strangerToken: string
const log = recordingLogger()

const clusterRole = async (name: string): Promise<KubeObject> => {
  const role = (await deployObjects('rbac.yaml')).find(
    (o) => o.kind === 'ClusterRole' && o.metadata.name === name,
  )
  assert.ok(role, `deploy/rbac.yaml ships ClusterRole ${name}`)
  return role
}
const binding = (name: string, role: string, subject: Record<string, string>): KubeObject => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
  subjects: [subject],
})

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  const ns = await env().createNamespace('secure-metrics')
  const id = randomBytes(3).toString('hex')

  // The reviewing identity: a certificate user bound to exactly deploy/'s metrics-auth rules.
  const reviewerUser = `metrics-reviewer-${id}`
  const authRole = await clusterRole(`${OPERATOR_NAME}-metrics-auth`)
  const readerRole = await clusterRole('edgeop-metrics-reader')
  const authRoleName = `${reviewerUser}-auth`
  await applyObjects(admin, [
    { ...authRole, metadata: { name: authRoleName } },
    binding(authRoleName, authRoleName, { kind: 'User', name: reviewerUser, apiGroup: RBAC }),
    readerRole,
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'prometheus', namespace: ns } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'stranger', namespace: ns } },
    binding(`metrics-reader-${id}`, 'edgeop-metrics-reader', {
      kind: 'ServiceAccount',
      name: 'prometheus',
      namespace: ns,
    }),
  ])
  const rbac = (resource: string, kind: string) => ({
    group: RBAC,
    version: 'v1',
    resource,
    namespaced: false,
    kind,
  })
  defer(async () => {
    for (const name of [authRoleName, `metrics-reader-${id}`])
      await admin.resource(rbac('clusterrolebindings', 'ClusterRoleBinding')).delete(name)
    await admin.resource(rbac('clusterroles', 'ClusterRole')).delete(authRoleName)
  })
  const creds = await env().userKubeconfig(reviewerUser)
  const reviewer = userClient(env(), env().server, { name: reviewerUser, ...creds })
  defer(() => reviewer.close())
  const adminTls = { caPem: env().caPem, ...env().admin }
  readerToken = await serviceAccountToken(env().server, adminTls, ns, 'prometheus')
  strangerToken = await serviceAccountToken(env().server, adminTls, ns, 'stranger')

  certDir = await mkdtemp(join(tmpdir(), 'edgeop-metrics-certs-'))
  defer(() => rm(certDir, { recursive: true, force: true }))
  await writePair(selfSignedCertificate())

  const registry = new MetricsRegistry()
  registry.counter({ name: 'scrapes_test_total', help: 'A sample.' }).inc()
  ops = await startOpsServer({
    registry,
    healthz: new HealthChecks('healthz'),
    readyz: new HealthChecks('readyz'),
    metricsBindAddress: '127.0.0.1:0',
    healthProbeBindAddress: '0',
    secureMetrics: {
      // Denials are not cached here, so a binding still reaching the authorizer is retried at once.
      filter: new MetricsAuthFilter(reviewer, { logger: log, deniedTtlMs: 0 }),
      certDir,
      reloadIntervalMs: RELOAD_MS,
      logger: log,
    },
  })
  defer(() => ops.close())
  url = `https://${ops.metricsAddress}/metrics`
})

async function writePair(pair: { cert: string; key: string }): Promise<void> {
  // Key first: the pair is briefly mismatched, which the watcher must skip.
  await writeFile(join(certDir, 'tls.key'), pair.key)
  await writeFile(join(certDir, 'tls.crt'), pair.cert)
}

test('a token bound to edgeop-metrics-reader scrapes; another token gets 403; none or a forged one 401', async () => {
  const ok = await eventually(
    async () => {
      const r = await scrape(url, readerToken)
      return r.status === 200 && r
    },
    { timeoutMs: 30_000, what: 'the metrics-reader binding to take effect' },
  )
  assert.equal(ok.contentType, METRICS_CONTENT_TYPE)
  assert.match(ok.body, /^# TYPE scrapes_test_total counter\nscrapes_test_total 1$/m)

  const denied = await scrape(url, strangerToken)
  assert.equal(denied.status, 403)
  assert.match(
    denied.body,
    /^Authorization denied for user "system:serviceaccount:secure-metrics-[^"]+:stranger"\n$/,
  )

  const none = await scrape(url)
  assert.deepEqual([none.status, none.wwwAuthenticate], [401, 'Bearer'])
  const forged = await scrape(url, `${readerToken.slice(0, -4)}AAAA`)
  assert.equal(forged.status, 401, 'a token with a broken signature fails the TokenReview')

  const logged = JSON.stringify(log.lines)
  for (const t of [readerToken, strangerToken]) assert.ok(!logged.includes(t), 'no token in any log line')
  assert.ok(
    !log.lines.some((l) => l.level === 'warn'),
    `the reviewer's rights suffice: ${logged.slice(0, 300)}`,
  )
})

test('rewritten certificate files are served on the next connection, without a restart', async () => {
  const before = await scrape(url, readerToken)
  const next = selfSignedCertificate()
  const want = new X509Certificate(next.cert)
  assert.notEqual(before.fingerprint256, want.fingerprint256)
  await writePair(next)
  const after = await eventually(
    async () => {
      const r = await scrape(url, readerToken)
      return r.fingerprint256 === want.fingerprint256 && r
    },
    { timeoutMs: 10_000, what: 'the new certificate on a fresh connection' },
  )
  assert.equal(after.serialNumber, want.serialNumber)
  assert.equal(after.status, 200)
  assert.ok(
    log.lines.some(
      (l) => l.msg === 'serving certificate reloaded' && l.fields?.sha256 === want.fingerprint256,
    ),
  )
})
