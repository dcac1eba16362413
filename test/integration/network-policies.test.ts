/**
 * The NetworkPolicies as every install method renders them: `helm template` and
 * `kustomize build` admit /metrics from the scrapers only, the webhook port from the apiserver's
 * addresses only, and no port from every source; `helm template --dry-run=server` (as `helm install`)
 * looks the apiserver's addresses up in the real apiserver's `kubernetes` EndpointSlice; the rendered
 * policies pass a server-side dry run.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import {
  METRICS_PORT,
  PROBE_PORT,
  SCRAPER_NAMESPACE,
  WEBHOOK_PORT,
} from '../../src/operators/appservice/deployment-names.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { applyObjects, deployObjects } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { helmTemplate, kustomizeBuild } from '../support/rendered-manifests.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let admin: KubeClient

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
})

type Rule = { from?: Record<string, unknown>[]; ports: { port: number }[] }
type Policy = KubeObject & { spec: { podSelector: unknown; ingress: Rule[] } }

const policies = (objects: KubeObject[]) => objects.filter((o): o is Policy => o.kind === 'NetworkPolicy')
const rulesFor = (p: Policy, port: number) =>
  p.spec.ingress.filter((r) => r.ports.some((x) => x.port === port))
const SCRAPERS = [
  { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SCRAPER_NAMESPACE } } },
]

/** No rule without `from` (it would admit every source), none for the probe port. */
function assertClosed(p: Policy): void {
  for (const rule of p.spec.ingress)
    assert.ok(rule.from && rule.from.length > 0, `${p.metadata.name}: a rule admits every source`)
  assert.deepEqual(rulesFor(p, PROBE_PORT), [], `${p.metadata.name}: the kubelet probes from the node`)
}

test('NetworkPolicy: helm template renders the operator and agent policies: scrapers on metrics, the apiserver on webhooks, nothing from every source', async () => {
  const defaults = policies(await helmTemplate('edgeop', 'edgeop-system'))
  assert.deepEqual(
    defaults.map((p) => p.metadata.name),
    ['edgeop-appservice-metrics'],
    'the name the open policy had, so that an upgrade replaces it',
  )
  assertClosed(defaults[0]!)
  assert.deepEqual(rulesFor(defaults[0]!, METRICS_PORT)[0]?.from, SCRAPERS)
  assert.deepEqual(rulesFor(defaults[0]!, WEBHOOK_PORT), [], 'no apiserver address known to helm template')

  const set = policies(
    await helmTemplate('edgeop', 'edgeop-system', [
      '--set',
      'agent.enabled=true',
      '--set',
      'webhooks.networkPolicy.apiserverCIDRs={172.18.0.2/32,fd00::2/128}',
      '--set',
      'metrics.networkPolicy.fromPodLabels.app\\.kubernetes\\.io/name=prometheus',
    ]),
  )
  assert.deepEqual(
    set.map((p) => p.metadata.name),
    ['edgeop-appservice-metrics', 'edgeop-agent-metrics'],
  )
  const scrapersWithPods = [
    { ...SCRAPERS[0], podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } },
  ]
  for (const p of set) {
    assertClosed(p)
    assert.deepEqual(rulesFor(p, METRICS_PORT)[0]?.from, scrapersWithPods, p.metadata.name)
  }
  assert.deepEqual(rulesFor(set[0]!, WEBHOOK_PORT)[0]?.from, [
    { ipBlock: { cidr: '172.18.0.2/32' } },
    { ipBlock: { cidr: 'fd00::2/128' } },
  ])
  assert.deepEqual(rulesFor(set[1]!, WEBHOOK_PORT), [], 'the agent serves no webhooks')

  const off = await helmTemplate('edgeop', 'edgeop-system', ['--set', 'metrics.networkPolicy.enabled=false'])
  assert.deepEqual(policies(off), [])
  await assert.rejects(
    helmTemplate('edgeop', 'edgeop-system', ['--set', 'webhooks.networkPolicy.apiserverCIDRs={everywhere}']),
    /apiserverCIDRs/,
  )
})

test('NetworkPolicy: kustomize build config/agent carries the operator and agent policies of deploy/', async () => {
  const built = policies(await kustomizeBuild('agent'))
  const shipped = [
    ...(await deployObjects('networkpolicy.yaml')),
    ...(await deployObjects('agent/networkpolicy.yaml')),
  ] as Policy[]
  assert.deepEqual(built.map((p) => p.metadata.name).sort(), shipped.map((p) => p.metadata.name).sort())
  for (const p of built) {
    assertClosed(p)
    assert.deepEqual(p.spec, shipped.find((s) => s.metadata.name === p.metadata.name)!.spec)
  }
})

test('NetworkPolicy: as helm install, the chart admits the webhook port from the addresses of the kubernetes EndpointSlice; the policies pass a dry run', async () => {
  // The test apiserver runs with --endpoint-reconciler-type=none: the EndpointSlice it would keep is
  // written here as a real apiserver writes it (two documentation addresses, RFC 5737: one ipBlock each).
  const SLICES = {
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    namespaced: true,
    kind: 'EndpointSlice',
  }
  const existing = await admin
    .resource(SLICES, 'default')
    .get('kubernetes')
    .catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 404) return undefined
      throw e
    })
  const slice = (existing ??
    (await admin.resource(SLICES, 'default').create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'] }, { addresses: ['192.0.2.11'] }],
      ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
    } as KubeObject))) as KubeObject & { endpoints: { addresses: string[] }[] }
  if (!existing) defer(() => admin.resource(SLICES, 'default').delete('kubernetes'))
  const expected = slice.endpoints!.flatMap((e) =>
    e.addresses.map((a) => ({ ipBlock: { cidr: a.includes(':') ? `${a}/128` : `${a}/32` } })),
  )
  const ns = await env().createNamespace('netpol')
  // A release of its own and no CRDs: as an install, the server-side render refuses objects another
  // release (or a test that installed the CRD directly) owns on the shared control plane.
  const release = `np-${ns.slice(-8)}`
  const rendered = policies(
    await helmTemplate(release, ns, ['--dry-run=server', '--skip-crds', '--set', 'agent.enabled=true'], {
      KUBECONFIG: env().kubeconfig,
    }),
  )
  const operator = rendered.find((p) => p.metadata.name === `${release}-appservice-metrics`)!
  assertClosed(operator)
  assert.deepEqual(rulesFor(operator, WEBHOOK_PORT)[0]?.from, expected)
  await applyObjects(admin, rendered, { dryRun: true })
})
