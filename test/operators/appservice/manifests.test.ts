import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { generatedFiles, manifestFiles } from '../../../build/manifests.ts'
import { MONITORING_SOURCES } from '../../../build/monitoring.ts'
import { parseDuration } from '../../../src/cli/flags/duration.ts'
import type { KubeObject } from '../../../src/core/types.ts'
import { appServiceCrd, SHIPPED_STORAGE_VERSION } from '../../../src/operators/appservice/api.ts'
import {
  METRICS_PORT,
  PROBE_PORT,
  SCRAPER_NAMESPACE,
  WEBHOOK_PORT,
} from '../../../src/operators/appservice/deployment-names.ts'
import { ingressPolicy } from '../../../src/operators/appservice/manifests.ts'
import { deployObjects, deployYamlFiles } from '../../support/deploy-manifests.ts'

const ROOT = join(import.meta.dirname, '../../..')

/** The slice of the operator Deployment these tests read. */
type Pod = KubeObject & {
  spec: {
    template: {
      metadata: { labels: Record<string, string> }
      spec: {
        terminationGracePeriodSeconds: number
        containers: { args: string[]; ports: { name: string; containerPort: number }[] }[]
      }
    }
  }
}

test("deploy/, config/ and the chart's generated files equal what build/manifests.ts generates (run npm run build:manifests after a change)", async () => {
  const files = generatedFiles()
  for (const [file, text] of Object.entries(files)) {
    assert.equal(await readFile(join(ROOT, file), 'utf8'), text, file)
  }
  // Every file under config/ is generated, or one of config/monitoring's sources: none is stale.
  const onDisk = (await readdir(join(ROOT, 'config'), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort()
  assert.deepEqual(
    onDisk,
    [...Object.keys(files).filter((f) => f.startsWith('config/')), ...MONITORING_SOURCES].sort(),
  )
})

test('the checked-in CRD is the one generated from the zod schema', async () => {
  const docs = (await readFile(join(ROOT, 'deploy/crd.yaml'), 'utf8')).split(/^---$/m).map((d) => parse(d))
  assert.deepEqual(docs, [appServiceCrd({ storage: SHIPPED_STORAGE_VERSION })])
})

test('the operator Deployment is hardened: non-root, read-only root filesystem, no capabilities, seccomp', async () => {
  const [dep] = (await readFile(join(ROOT, 'deploy/deployment.yaml'), 'utf8'))
    .split(/^---$/m)
    .map((d) => parse(d))
  const pod = dep.spec.template.spec
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault')
  const c = pod.containers[0]
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  })
  assert.equal(c.readinessProbe.httpGet.path, '/readyz')
  assert.equal(c.livenessProbe.httpGet.path, '/healthz')
  assert.ok(c.resources.limits.memory && c.resources.requests.cpu)
  assert.equal(dep.spec.replicas, 2)
  assert.ok(c.args.includes('--leader-elect'))
})

test("the binary accepts the Deployment's arguments (flag validation passes; only the missing cluster stops it)", async () => {
  const [dep] = (await readFile(join(ROOT, 'deploy/deployment.yaml'), 'utf8'))
    .split(/^---$/m)
    .map((d) => parse(d))
  const args: string[] = dep.spec.template.spec.containers[0].args
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'src/main.ts'), ...args, '--kubeconfig=/nonexistent/kubeconfig'],
    { encoding: 'utf8' },
  )
  // A refused flag is a plain `edgeop: --flag: …` line; a start-up mistake is the logger's `cannot start` line.
  assert.doesNotMatch(r.stderr, /^edgeop: /m, `usage error: ${r.stderr}`)
  assert.match(r.stderr, /edgeop cannot start: .*nonexistent\/kubeconfig/)
})

test('the pod outlives drain + Lease release: terminationGracePeriodSeconds exceeds the grace plus the release bound', async () => {
  const [dep] = await deployObjects('deployment.yaml')
  const pod = (dep as Pod).spec.template.spec
  const flag = (name: string) => {
    const arg = pod.containers[0]!.args.find((a) => a.startsWith(`--${name}=`))
    assert.ok(arg, `--${name} is set explicitly in deploy/deployment.yaml`)
    return parseDuration(arg.slice(name.length + 3))!
  }
  const drain = flag('shutdown-grace-period')
  const release = flag('leader-election-renew-deadline')
  assert.ok(drain > 0 && release > 0)
  assert.ok(
    pod.terminationGracePeriodSeconds * 1000 > drain + release,
    `pod grace ${pod.terminationGracePeriodSeconds} s vs drain ${drain} ms + release ${release} ms`,
  )
})

test('kubectl apply -f deploy/ reads files in lexical order: the Namespace comes before every object in it', async () => {
  const onDisk = await deployYamlFiles()
  // deploy/migrate/ is a folder of its own, which a non-recursive `kubectl apply -f deploy/` skips.
  const topLevel = Object.keys(manifestFiles()).filter((f) => !f.includes('/'))
  assert.deepEqual(onDisk, topLevel.sort(), 'no stale or missing file in deploy/')
  assert.deepEqual(await deployYamlFiles('migrate'), ['migrate/job.yaml'])
  const objects = (await Promise.all(onDisk.map(deployObjects))).flat()
  const nsAt = objects.findIndex((o) => o.kind === 'Namespace')
  assert.ok(nsAt >= 0)
  objects.forEach((o, i) => {
    if (o.metadata.namespace) assert.ok(i > nsAt, `${o.kind}/${o.metadata.name} before its Namespace`)
  })
})

test('the metrics Service selects the operator pods and targets their metrics port', async () => {
  const [svc] = await deployObjects('metrics-service.yaml')
  const [dep] = await deployObjects('deployment.yaml')
  const [policy] = await deployObjects('networkpolicy.yaml')
  const spec = svc!.spec as {
    selector: Record<string, string>
    ports: { name: string; port: number; targetPort: string }[]
  }
  const template = (dep as Pod).spec.template
  for (const [k, v] of Object.entries(spec.selector)) assert.equal(template.metadata.labels[k], v, k)
  const [port] = spec.ports
  assert.equal(port?.name, 'metrics')
  assert.equal(port?.port, 8443, "kubebuilder's HTTPS metrics port")
  const container = template.spec.containers[0]!
  const target = container.ports.find((p) => p.name === port?.targetPort)
  assert.equal(target?.containerPort, 8443)
  const admitted = (policy!.spec as { ingress: { ports: { port: number }[] }[] }).ingress.flatMap(
    (r) => r.ports,
  )
  assert.ok(
    admitted.some((p) => p.port === target?.containerPort),
    'the NetworkPolicy admits the metrics port',
  )
})

test('every URL in the Deployment names something deploy/ ships (no --database-api to a Service that is not there)', async () => {
  const [dep] = await deployObjects('deployment.yaml')
  const services = new Set(
    (await Promise.all(Object.keys(manifestFiles()).map(deployObjects)))
      .flat()
      .filter((o) => o.kind === 'Service')
      .map((o) => `${o.metadata.name}.${o.metadata.namespace}.svc`),
  )
  for (const arg of (dep as Pod).spec.template.spec.containers[0]!.args) {
    const host = /^--[\w-]+=\w+:\/\/([^/:]+)/.exec(arg)?.[1]
    if (host) assert.ok(services.has(host), `${arg}: ${host} is not a Service in deploy/`)
  }
})

type Policy = KubeObject & {
  spec: {
    podSelector: { matchLabels: Record<string, string> }
    policyTypes: string[]
    ingress: { from?: Record<string, unknown>[]; ports: { port: number }[] }[]
  }
}

test('NetworkPolicy: the operator and agent NetworkPolicies admit /metrics from the scrapers only, nothing from every source, and no rule for the probes', async () => {
  const [operator] = (await deployObjects('networkpolicy.yaml')) as Policy[]
  const [agent] = (await deployObjects('agent/networkpolicy.yaml')) as Policy[]
  const [dep] = (await deployObjects('deployment.yaml')) as Pod[]
  const daemonSet = (await deployObjects('agent/daemonset.yaml')).find((o) => o.kind === 'DaemonSet') as Pod
  for (const [policy, pod] of [
    [operator!, dep!],
    [agent!, daemonSet],
  ] as const) {
    const labels = pod.spec.template.metadata.labels
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels))
      assert.equal(labels[k], v, `${policy.metadata.name} selects its pods by ${k}`)
    assert.deepEqual(policy.spec.policyTypes, ['Ingress'])
    for (const rule of policy.spec.ingress)
      assert.ok(
        rule.from && rule.from.length > 0,
        `${policy.metadata.name}: a rule without from admits every source`,
      )
    const ports = policy.spec.ingress.flatMap((r) => r.ports.map((p) => p.port))
    assert.ok(!ports.includes(PROBE_PORT), 'the kubelet probes from the node: no rule')
    assert.ok(!ports.includes(WEBHOOK_PORT), 'no webhook rule without the apiserver addresses')
    const metrics = policy.spec.ingress.find((r) => r.ports.some((p) => p.port === METRICS_PORT))
    assert.deepEqual(metrics?.from, [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SCRAPER_NAMESPACE } } },
    ])
  }
  const { name, namespace, labels } = agent!.metadata
  assert.deepEqual(
    agent,
    ingressPolicy(
      { name, namespace, labels },
      { 'app.kubernetes.io/name': 'edgeop-agent' },
      { metricsPort: METRICS_PORT },
    ),
    'deploy/agent/networkpolicy.yaml is what ingressPolicy makes for the agent',
  )
})

test('NetworkPolicy: with the apiserver addresses given, the webhook port is admitted from those ipBlocks only', () => {
  const policy = ingressPolicy(
    { name: 'p' },
    { app: 'x' },
    {
      metricsPort: METRICS_PORT,
      webhookPort: WEBHOOK_PORT,
      apiserverCidrs: ['172.18.0.2/32', 'fd00::2/128'],
    },
  ) as Policy
  const webhook = policy.spec.ingress.find((r) => r.ports.some((p) => p.port === WEBHOOK_PORT))
  assert.deepEqual(webhook?.from, [
    { ipBlock: { cidr: '172.18.0.2/32' } },
    { ipBlock: { cidr: 'fd00::2/128' } },
  ])
})

test('deploy/migrate/job.yaml runs `migrate` with the operator image as a ServiceAccount of its own, bound to exactly what migrateStorage calls', async () => {
  const objects = await deployObjects('migrate/job.yaml')
  const job = objects.find((o) => o.kind === 'Job')!
  const [dep] = await deployObjects('deployment.yaml')
  type Pod = { serviceAccountName: string; containers: { image: string; args: string[] }[] }
  const pod = (job.spec as { template: { spec: Pod } }).template.spec
  const operatorPod = (dep!.spec as { template: { spec: Pod } }).template.spec
  assert.deepEqual(pod.containers[0]!.args, ['migrate'])
  assert.equal(pod.containers[0]!.image, operatorPod.containers[0]!.image)
  assert.notEqual(pod.serviceAccountName, operatorPod.serviceAccountName)
  const role = objects.find((o) => o.kind === 'ClusterRole') as unknown as {
    rules: { resources: string[]; verbs: string[] }[]
  }
  assert.deepEqual(
    role.rules.map((r) => `${r.resources.join()}:${r.verbs.join()}`),
    ['customresourcedefinitions:get', 'customresourcedefinitions/status:patch', 'appservices:list,update'],
  )
})
