/**
 * charts/edgeop with the helm binary build/tools builds: `helm lint` passes; `helm template`
 * renders default and non-default values and refuses a typo in the values (values.schema.json);
 * `helm install` into the real apiserver, and the operator started with the installed
 * Deployment's args and env, as the chart's ServiceAccount (a bound token, as in its pod), makes an
 * AppService Ready (controller-manager, scheduler and KWOK give it Ready pods). The container
 * itself cannot run here (no kubelet): the built artifact dist/edgeop.cjs stands in for it.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { appServiceWhere, condition, installAppServiceCrd } from '../support/appservice.ts'
import { serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { CHART, helm, helmTemplate, one, parseObjects } from '../support/rendered-manifests.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let admin: KubeClient

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
})

type Container = { args: string[]; env?: { name: string; value?: string }[]; image: string }
const containerOf = (objects: KubeObject[], kind: string, suffix = ''): Container =>
  (one(objects, kind, suffix).spec as { template: { spec: { containers: Container[] } } }).template.spec
    .containers[0]!

test('helm lint --strict passes, with default values and with every toggle on', async () => {
  for (const extra of [[], ['--set', 'agent.enabled=true', '--set', 'metrics.serviceMonitor.enabled=true']]) {
    const out = await helm(['lint', '--strict', CHART, ...extra])
    assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/)
  }
})

test('helm template: defaults render the operator alone; toggles add the agent and the ServiceMonitor, remove the PDB and the Lease RBAC', async () => {
  const defaults = await helmTemplate('edgeop', 'edgeop-system')
  const kinds = defaults.map((o) => o.kind)
  assert.ok(!kinds.includes('DaemonSet') && !kinds.includes('ServiceMonitor'), kinds.join())
  assert.equal(containerOf(defaults, 'Deployment').image, 'ghcr.io/example/edgeop:0.1.0')
  const toggled = await helmTemplate('edgeop', 'edgeop-system', [
    '--set',
    'agent.enabled=true',
    '--set',
    'metrics.serviceMonitor.enabled=true',
    '--set',
    'podDisruptionBudget.enabled=false',
    '--set',
    'leaderElection.enabled=false',
    '--set',
    'image.pullPolicy=Always',
    '--set',
    'tolerations[0].operator=Exists',
    '--set',
    'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=edge',
    '--set',
    'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
    // The ServiceMonitor is rendered only where its CRD is served.
    '--api-versions',
    'monitoring.coreos.com/v1',
  ])
  const names = toggled.map((o) => `${o.kind}/${o.metadata.name}`)
  for (const want of [
    'DaemonSet/edgeop-agent',
    'ServiceMonitor/edgeop-appservice',
    'ClusterRole/edgeop-agent',
    'Deployment/edgeop-agent-aggregator',
    'ValidatingAdmissionPolicy/edgeop-agent-own-reports',
    'ValidatingAdmissionPolicyBinding/edgeop-agent-own-reports',
  ])
    assert.ok(names.includes(want), `${want} in ${names.join()}`)
  assert.ok(!names.includes('PodDisruptionBudget/edgeop-appservice'))
  assert.ok(
    !names.includes('Role/edgeop-appservice-leader-election'),
    'no Lease Role without leader election',
  )
  const operator = containerOf(toggled, 'Deployment', 'appservice')
  assert.ok(!operator.args.some((a) => a.startsWith('--leader-elect')), operator.args.join(' '))
  const pod = (
    one(toggled, 'Deployment', 'appservice').spec as { template: { spec: Record<string, unknown> } }
  ).template.spec
  assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }])
  assert.ok(pod.affinity, 'affinity rendered')
  assert.equal(containerOf(toggled, 'DaemonSet').image, operator.image)
  // A ServiceMonitor without the Service it scrapes is refused with the reason.
  await assert.rejects(
    helmTemplate('edgeop', 'edgeop-system', [
      '--set',
      'metrics.service.enabled=false',
      '--set',
      'metrics.serviceMonitor.enabled=true',
      '--api-versions',
      'monitoring.coreos.com/v1',
    ]),
    /serviceMonitor\.enabled needs metrics\.service\.enabled/,
  )
})

test('a typo in the values fails helm template with the key named (values.schema.json)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-values-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'values.yaml')
  await writeFile(file, 'replicas: 1\nimagee:\n  tag: "1.0"\n')
  const cases: [string[], RegExp][] = [
    [['--set', 'replcas=3'], /replcas/],
    [['--set', 'leaderElection.enable=false'], /enable/],
    [['--set', 'logLevel=verbose'], /logLevel/],
    [['--set', 'leaderElection.renewDeadline=10 seconds'], /renewDeadline/],
    [['-f', file], /imagee/],
  ]
  for (const [args, named] of cases) {
    const err = await helmTemplate('edgeop', 'edgeop-system', args).then(
      () => assert.fail(`accepted ${args.join(' ')}`),
      (e: Error) => e,
    )
    assert.match(
      err.message,
      /values don't meet the specifications of the schema|additional properties|schema/i,
    )
    assert.match(err.message, named, args.join(' '))
  }
})

test("helm install into the real apiserver; the operator run with the installed Deployment's args as the chart's ServiceAccount makes an AppService Ready", async () => {
  await env().startControllers()
  const ns = await env().createNamespace('helm')
  const release = `h${randomBytes(3).toString('hex')}`
  const kubeEnv = { KUBECONFIG: env().kubeconfig }
  const out = await helm(
    [
      'install',
      release,
      CHART,
      '--namespace',
      ns,
      '--set',
      `watchNamespaces={${ns}}`,
      '--set',
      'logLevel=debug',
      // No kubelet runs the pods: a Fail webhook without endpoints would refuse every AppService
      // write of the other tests sharing this control plane (test/integration/webhooks.test.ts has them),
      // and crds/'s CRD would send v1beta1 reads to the conversion webhook: the shared CRD, installed
      // without conversion by installAppServiceCrd, stays (manifests-equivalence.test.ts checks crds/).
      '--set',
      'webhooks.enabled=false',
      '--skip-crds',
    ],
    kubeEnv,
  )
  assert.match(out, /STATUS: deployed/)
  defer(() => helm(['uninstall', release, '--namespace', ns], kubeEnv))
  const installed = parseObjects(await helm(['get', 'manifest', release, '--namespace', ns], kubeEnv))
  const container = containerOf(installed, 'Deployment')
  assert.ok(container.args.includes(`--namespace=${ns}`) && container.args.includes('--log-level=debug'))
  // The pod's args, less the bind addresses: the test binds ephemeral loopback ports instead.
  const args = container.args.filter((a) => !/^--(metrics|health-probe|webhook)-bind-address=/.test(a))
  const serviceAccount = (
    one(installed, 'Deployment').spec as { template: { spec: { serviceAccountName: string } } }
  ).template.spec.serviceAccountName
  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    ns,
    serviceAccount,
  )
  // The release namespace, as the pod's in-cluster namespace file gives it: the Lease's default.
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { token },
    namespace: ns,
  })
  let op: OperatorProcess | undefined
  defer(() => op?.kill('SIGKILL'))
  op = await startOperator('helm', [...args, `--kubeconfig=${kubeconfig}`])
  const apps = admin.resource(APPSERVICES, ns)
  await apps.create({ metadata: { name: 'web' }, spec: { image: 'nginx:1.27', replicas: 1 } } as AppService)
  const ready = await appServiceWhere(apps, 'web', (a) => condition(a, 'Ready')?.status === 'True', 'Ready')
  assert.equal(ready.status?.readyReplicas, 1)
  // It elected itself leader with the chart's Lease name, in the release namespace the chart's Role covers.
  assert.equal(await op.metric('leader_election_master_status'), 1)
})
