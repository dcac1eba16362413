/**
 * The chart's common knobs, rendered with `helm template` (the helm binary build/tools builds): an
 * existing ServiceAccount and RBAC instead of the chart's, a priority class, topology spread, and the
 * Prometheus Operator's objects only where their CRDs are served (`.Capabilities`, `--api-versions`).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeObject } from '../../src/core/types.ts'
import { helmTemplate, one } from '../support/rendered-manifests.ts'

const MONITORING = ['--api-versions', 'monitoring.coreos.com/v1']
const podSpec = (objects: KubeObject[]) =>
  (one(objects, 'Deployment').spec as { template: { spec: Record<string, unknown> } }).template.spec
const kinds = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`)

test('serviceAccount.create=false and rbac.create=false: no ServiceAccount, Role or binding; the pod runs as the named account', async () => {
  const objects = await helmTemplate('edgeop', 'platform-ops', [
    '--set',
    'serviceAccount.create=false',
    '--set',
    'serviceAccount.name=platform-operator',
    '--set',
    'rbac.create=false',
  ])
  const left = kinds(objects).filter((k) =>
    /^(ServiceAccount|Role|ClusterRole|RoleBinding|ClusterRoleBinding)\//.test(k),
  )
  assert.deepEqual(left, [])
  assert.equal(podSpec(objects).serviceAccountName, 'platform-operator')
  const defaults = await helmTemplate('edgeop', 'platform-ops')
  assert.equal(podSpec(defaults).serviceAccountName, 'edgeop-appservice')
  assert.ok(kinds(defaults).includes('ServiceAccount/edgeop-appservice'))
  assert.ok(kinds(defaults).includes('ClusterRole/edgeop-appservice'))
})

test('priorityClassName and topologySpreadConstraints reach the operator’s pod; absent by default', async () => {
  const objects = await helmTemplate('edgeop', 'platform-ops', [
    '--set',
    'priorityClassName=system-cluster-critical',
    '--set',
    'topologySpreadConstraints[0].maxSkew=1',
    '--set',
    'topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone',
    '--set',
    'topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway',
  ])
  const pod = podSpec(objects)
  assert.equal(pod.priorityClassName, 'system-cluster-critical')
  assert.deepEqual(pod.topologySpreadConstraints, [
    { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
  ])
  const defaults = podSpec(await helmTemplate('edgeop', 'platform-ops'))
  assert.ok(!('priorityClassName' in defaults) && !('topologySpreadConstraints' in defaults))
})

test('ServiceMonitor and PrometheusRule are rendered only when the cluster serves monitoring.coreos.com/v1', async () => {
  const on = ['--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.prometheusRule.enabled=true']
  const without = kinds(await helmTemplate('edgeop', 'platform-ops', on))
  assert.ok(!without.some((k) => /^(ServiceMonitor|PrometheusRule)\//.test(k)), without.join())
  const served = kinds(await helmTemplate('edgeop', 'platform-ops', [...on, ...MONITORING]))
  assert.ok(served.includes('ServiceMonitor/edgeop-appservice'), served.join())
  assert.ok(served.includes('PrometheusRule/edgeop-appservice'), served.join())
})

test('the CRD switch is Helm’s --skip-crds: it leaves out the three CRDs and nothing else; a crds.enabled value is refused, not ignored', async () => {
  const crds = (objects: KubeObject[]) =>
    kinds(objects)
      .filter((k) => k.startsWith('CustomResourceDefinition/'))
      .sort()
  const withCrds = await helmTemplate('edgeop', 'platform-ops', ['--set', 'agent.enabled=true'])
  assert.deepEqual(crds(withCrds), [
    'CustomResourceDefinition/appservices.platform.example.com',
    'CustomResourceDefinition/nodeconfigreports.platform.example.com',
    'CustomResourceDefinition/nodeconfigs.platform.example.com',
  ])
  const skipped = await helmTemplate('edgeop', 'platform-ops', ['--set', 'agent.enabled=true', '--skip-crds'])
  assert.deepEqual(crds(skipped), [])
  assert.deepEqual(
    kinds(skipped),
    kinds(withCrds).filter((k) => !k.startsWith('CustomResourceDefinition/')),
  )
  // cert-manager's and Karpenter's charts spell the switch crds.enabled: here the schema names the key.
  await assert.rejects(helmTemplate('edgeop', 'platform-ops', ['--set', 'crds.enabled=false']), /crds/)
})
