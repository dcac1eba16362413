/**
 * config/'s kustomize overlays and charts/edgeop render the operator deploy/ ships: every
 * overlay and the chart (default and non-default values) pass a server-side dry run on the real
 * apiserver, and the operator they render has deploy/'s args, RBAC rules, security contexts,
 * resources, grace period and disruption budget — the dev overlay and the chart's values
 * differing only where they say so. The prometheus overlay and the chart ship the same alerts,
 * dashboard and agent PodMonitor.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { ROOT } from '../../build/artifact.ts'
import { DEFAULT_IMAGE_NAME, DEFAULT_IMAGE_TAG } from '../../build/config-layout.ts'
import { DASHBOARD_FILE, MONITORING_DIR, ruleGroups } from '../../build/monitoring.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { toYaml } from '../../src/config/yaml/emit.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { OPERATOR_NAMESPACE } from '../../src/operators/appservice/deployment-names.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { applyObjects, deployObjects, deployYamlFiles } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { helmTemplate, kustomizeBuild, one, operatorShape } from '../support/rendered-manifests.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let admin: KubeClient

/**
 * Stand-ins for the Prometheus Operator's CRDs the manifests use (group, kind and scope; any spec
 * accepted), so ServiceMonitors, PodMonitors and PrometheusRules can be dry-run: the test apiserver
 * has no Prometheus Operator. They check that the objects map to served kinds, not the Prometheus
 * Operator's schemas (promtool checks the rules themselves: monitoring-rules.test.ts).
 */
const MONITORING_KINDS = ['ServiceMonitor', 'PodMonitor', 'PrometheusRule']
const monitoringCrd = (kind: string) =>
  ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.toLowerCase()}s.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      scope: 'Namespaced',
      names: {
        plural: `${kind.toLowerCase()}s`,
        singular: kind.toLowerCase(),
        kind,
        listKind: `${kind}List`,
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  }) as KubeObject

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await applyObjects(admin, [
    ...MONITORING_KINDS.map(monitoringCrd),
    ...(await deployObjects('00-namespace.yaml')),
  ])
  for (const kind of MONITORING_KINDS)
    await eventually(
      async () =>
        (await admin.mapper.forApiVersionKind('monitoring.coreos.com/v1', kind).catch(() => undefined)) !==
        undefined,
      { timeoutMs: 30_000, what: `${kind} discoverable` },
    )
})

/** Server-side dry run of every object; the names the server answered for, in order. */
async function dryRun(what: string, objects: KubeObject[]): Promise<void> {
  const applied = await applyObjects(admin, objects, { dryRun: true }).catch((err: Error) => {
    throw new Error(`${what}: ${err.message}`)
  })
  assert.deepEqual(
    applied.map((o) => `${o.kind}/${o.metadata.name}`),
    objects.map((o) => `${o.kind}/${o.metadata.name}`),
    what,
  )
}

/** deploy/ as `kubectl apply -f deploy/` reads it. */
async function deployed(): Promise<KubeObject[]> {
  return (await Promise.all((await deployYamlFiles()).map(deployObjects))).flat()
}

/** The kinds of `objects`, sorted: which objects a rendering has, whatever their order. */
const kinds = (objects: KubeObject[]) => objects.map((o) => o.kind).sort()

test('every kustomize overlay passes a server-side dry run', async () => {
  for (const overlay of ['default', 'prometheus', 'agent', 'dev']) {
    const objects = await kustomizeBuild(overlay)
    assert.ok(objects.length >= 10, `${overlay}: ${objects.length} objects`)
    await dryRun(`config/${overlay}`, objects)
  }
})

test("config/default renders deploy/ exactly: the same objects, the operator's args, RBAC, security contexts", async () => {
  const plain = await deployed()
  const built = await kustomizeBuild('default')
  assert.deepEqual(kinds(built), kinds(plain))
  assert.deepEqual(operatorShape(built), operatorShape(plain))
  const prometheus = await kustomizeBuild('prometheus')
  assert.deepEqual(operatorShape(prometheus), operatorShape(plain))
  const monitor = one(prometheus, 'ServiceMonitor').spec as { endpoints: { port: string }[] }
  const service = one(plain, 'Service', '-metrics').spec as { ports: { name: string }[] }
  assert.equal(
    monitor.endpoints[0]?.port,
    service.ports[0]?.name,
    'the ServiceMonitor scrapes the metrics port',
  )
})

test('config/dev differs from deploy/ only by one replica and --log-level=debug; config/agent adds the agent of deploy/agent/', async () => {
  const plain = operatorShape(await deployed())
  assert.deepEqual(operatorShape(await kustomizeBuild('dev')), {
    ...plain,
    replicas: 1,
    args: [...plain.args, '--log-level=debug'],
  })
  const agent = await kustomizeBuild('agent')
  assert.deepEqual(operatorShape(agent), plain)
  const daemonSet = (await deployObjects('agent/daemonset.yaml'))[0]!
  assert.deepEqual(one(agent, 'DaemonSet').spec, daemonSet.spec)
})

test('helm template with default values renders deploy/\'s operator (release "edgeop" in edgeop-system)', async () => {
  const plain = await deployed()
  const chart = await helmTemplate('edgeop', OPERATOR_NAMESPACE)
  await dryRun('helm template (defaults)', chart)
  assert.deepEqual(operatorShape(chart), operatorShape(plain))
  // deploy/'s objects, less the Namespace (`helm install --create-namespace` makes it), plus the
  // NodeConfig and NodeConfigReport CRDs (crds/ holds them all, so enabling the agent later needs no CRD step).
  const names = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()
  assert.deepEqual(
    names(chart),
    [
      ...names(plain.filter((o) => o.kind !== 'Namespace')),
      'CustomResourceDefinition/nodeconfigs.platform.example.com',
      'CustomResourceDefinition/nodeconfigreports.platform.example.com',
    ].sort(),
  )
})

test('the chart renders the webhook configurations and Service of deploy/ (labels aside); webhooks.enabled=false drops them', async () => {
  const plain = await deployed()
  const chart = await helmTemplate('edgeop', OPERATOR_NAMESPACE)
  for (const [kind, suffix] of [
    ['ValidatingWebhookConfiguration', ''],
    ['MutatingWebhookConfiguration', ''],
    ['Service', '-webhook'],
  ] as const) {
    // A Service's selector carries the chart's instance label too: its ports are compared. The
    // exclusions differ by design: the chart names its release namespace, which Helm knows; deploy/
    // and config/ select the operator's Namespace by a label a kustomize overlay keeps.
    const body = (o: KubeObject) =>
      kind === 'Service'
        ? (o.spec as { ports: unknown }).ports
        : (o.webhooks as Record<string, unknown>[]).map(
            ({ namespaceSelector: _s, matchConditions: _m, ...rest }) => rest,
          )
    assert.deepEqual(body(one(chart, kind, suffix)), body(one(plain, kind, suffix)), kind)
  }
  const off = await helmTemplate('edgeop', OPERATOR_NAMESPACE, ['--set', 'webhooks.enabled=false'])
  assert.deepEqual(
    off.filter((o) => /Webhook|webhook/.test(`${o.kind}/${o.metadata.name}`)).map((o) => o.metadata.name),
    [],
  )
  assert.ok(!operatorShape(off).args.some((a) => a.startsWith('--webhook')))
})

test("helm template with non-default values: the values reach the operator, RBAC and security stay deploy/'s", async () => {
  const ns = await env().createNamespace('chart')
  const plain = operatorShape(await deployed())
  const chart = await helmTemplate('other', ns, [
    '--set',
    'image.repository=registry.example/edgeop',
    '--set',
    'image.tag=9.9.9',
    '--set',
    'replicas=3',
    '--set',
    'leaderElection.leaseDuration=30s',
    '--set',
    'leaderElection.renewDeadline=20s',
    '--set',
    'shutdownGracePeriod=1m',
    '--set',
    'logLevel=debug',
    '--set',
    'extraArgs[0]=--max-concurrent-reconciles=4',
    '--set',
    'metrics.serviceMonitor.enabled=true',
    '--set',
    'metrics.podMonitor.enabled=true',
    '--set',
    'metrics.prometheusRule.enabled=true',
    '--set',
    'metrics.dashboard.enabled=true',
    '--set',
    'agent.enabled=true',
    '--set',
    'nodeSelector.kubernetes\\.io/os=linux',
    // The ServiceMonitor and PrometheusRule are rendered only where their CRDs are served.
    '--api-versions',
    'monitoring.coreos.com/v1',
  ])
  await dryRun('helm template (non-default values)', chart)
  const shape = operatorShape(chart)
  assert.equal(shape.image, 'registry.example/edgeop:9.9.9')
  assert.equal(shape.replicas, 3)
  assert.deepEqual(shape.args, [
    'run',
    '--leader-elect',
    '--leader-election-id=other-appservice',
    '--metrics-bind-address=:8443',
    '--health-probe-bind-address=:8081',
    '--webhook-bind-address=:9443',
    '--shutdown-grace-period=1m',
    '--leader-election-renew-deadline=20s',
    '--leader-election-lease-duration=30s',
    '--log-level=debug',
    '--max-concurrent-reconciles=4',
  ])
  // 60 s drain + 20 s release bound + 5 s to stop, as deploy/ computes it.
  assert.equal(shape.terminationGracePeriodSeconds, 85)
  for (const same of [
    'podSecurityContext',
    'securityContext',
    'resources',
    'clusterRules',
    'leaseRules',
  ] as const)
    assert.deepEqual(shape[same], plain[same], same)
  const agentRole = (await deployObjects('agent/rbac.yaml')).find(
    (o) => o.kind === 'ClusterRole',
  ) as KubeObject & {
    rules: unknown
  }
  assert.deepEqual((one(chart, 'ClusterRole', 'other-agent') as typeof agentRole).rules, agentRole.rules)
  assert.equal(one(chart, 'ServiceMonitor').metadata.namespace, ns)
})

test("the image is a parameter: a user's overlay's `images:` entry and the chart's image values replace it", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-overlay-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  // What a user writes: an overlay of their own on config/default, mapping the image.
  await writeFile(
    join(dir, 'kustomization.yaml'),
    toYaml({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      // kustomize takes a base outside the overlay's directory, by relative path only.
      resources: [relative(dir, join(import.meta.dirname, '../../config/default'))],
      images: [{ name: DEFAULT_IMAGE_NAME, newName: 'registry.example/mirror/edgeop', newTag: '2.0.0' }],
    }),
  )
  assert.equal(operatorShape(await kustomizeBuild(dir)).image, 'registry.example/mirror/edgeop:2.0.0')
  assert.equal(
    operatorShape(await kustomizeBuild('default')).image,
    `${DEFAULT_IMAGE_NAME}:${DEFAULT_IMAGE_TAG}`,
  )
  const chart = operatorShape(await helmTemplate('edgeop', OPERATOR_NAMESPACE, ['--set', 'image.tag=1.2.3']))
  assert.equal(chart.image, `${DEFAULT_IMAGE_NAME}:1.2.3`)
})

test('config/prometheus and the chart ship the same alerts, dashboard (sidecar-labelled) and agent PodMonitor', async () => {
  const kustomized = await kustomizeBuild('prometheus')
  const chart = await helmTemplate('edgeop', OPERATOR_NAMESPACE, [
    '--api-versions',
    'monitoring.coreos.com/v1',
    '--set',
    'metrics.prometheusRule.enabled=true',
    '--set',
    'metrics.dashboard.enabled=true',
    '--set',
    'metrics.podMonitor.enabled=true',
    '--set',
    'agent.enabled=true',
  ])
  const rules = ruleGroups(ROOT)
  const dashboard = await readFile(join(ROOT, MONITORING_DIR, DASHBOARD_FILE), 'utf8')
  const agentDaemonSet = await deployObjects('agent/daemonset.yaml')
  for (const [what, objects, daemonSets] of [
    ['config/prometheus', kustomized, agentDaemonSet],
    ['helm', chart, chart],
  ] as const) {
    assert.deepEqual((one(objects, 'PrometheusRule').spec as { groups: unknown }).groups, rules, what)
    const cm = one(objects, 'ConfigMap', '-dashboard')
    assert.equal(cm.metadata.labels?.grafana_dashboard, '1', what)
    assert.equal(
      ((cm as { data?: Record<string, string> }).data?.['edgeop.json'] ?? '').trim(),
      dashboard.trim(),
      what,
    )
    const pm = one(objects, 'PodMonitor').spec as { selector: { matchLabels: Record<string, string> } }
    const ds = one(daemonSets, 'DaemonSet').spec as { selector: { matchLabels: Record<string, string> } }
    assert.deepEqual(
      pm.selector.matchLabels,
      ds.selector.matchLabels,
      `${what}: the PodMonitor selects the agent`,
    )
  }
})
