/**
 * F4 on the real apiserver: config/default under a kustomize overlay that moves it to a namespace
 * of its own (as a platform team installs it), applied; the operator run with the overlay's
 * Deployment args, as the overlay's ServiceAccount (a bound token, as in its pod) with the
 * overlay's namespace as its own (the pod's in-cluster namespace file), takes the Lease in that
 * namespace: the RBAC the overlay moved there is the RBAC the operator needs to lead.
 * test/operators/appservice/namespace-overlay.test.ts checks the rendering alone.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { applyObjects, serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { kustomizeBuild, one } from '../support/rendered-manifests.ts'
import { useTestEnv } from '../support/test-env.ts'

const ROOT = join(import.meta.dirname, '../..')
const { env, setup, defer } = useTestEnv()
let admin: KubeClient

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
})

type PodSpec = { serviceAccountName: string; containers: { args: string[] }[] }

test('F4: config/default under a namespace overlay, applied: the operator as its ServiceAccount with its args takes the Lease in the overlay’s namespace', async () => {
  const id = randomBytes(3).toString('hex')
  const ns = `ovl-${id}`
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-overlay-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  // namePrefix: the cluster-scoped RBAC gets names of this run's own, so the e2e suite's deploy/
  // ClusterRoles on the shared control plane are not rebound to this namespace's ServiceAccount.
  await writeFile(
    join(dir, 'kustomization.yaml'),
    `namespace: ${ns}\nnamePrefix: ${ns}-\nresources:\n- ${relative(dir, join(ROOT, 'config/default'))}\n`,
  )
  const rendered = await kustomizeBuild(dir)
  // Not applied, for the other tests sharing this control plane: the CRD (the shared one, from
  // installAppServiceCrd, has no conversion webhook) and the Fail webhooks, which no pod serves here.
  const objects = rendered.filter(
    (o) =>
      ![
        'CustomResourceDefinition',
        'ValidatingWebhookConfiguration',
        'MutatingWebhookConfiguration',
      ].includes(o.kind!),
  )
  assert.equal(one(objects, 'Namespace').metadata.name, ns)
  await applyObjects(admin, objects)
  defer(async () => {
    for (const o of objects.filter((o) => o.metadata.namespace === undefined).reverse()) {
      const type = await admin.mapper.forApiVersionKind(o.apiVersion!, o.kind!)
      await admin
        .resource(type)
        .delete(o.metadata.name!)
        .catch(() => {})
    }
  })
  const pod = (one(objects, 'Deployment').spec as { template: { spec: PodSpec } }).template.spec
  const shipped = pod.containers[0]!.args
  const leaseName = /^--leader-election-id=(.+)$/.exec(
    shipped.find((a) => a.startsWith('--leader-election-id='))!,
  )![1]!
  // The pod's args, less the bind addresses (the test binds ephemeral loopback ports; no webhook
  // server without its certificate's Secret), and watching only this namespace, so the other
  // tests' AppServices are not reconciled. No --leader-election-namespace: the Lease's namespace
  // is the operator's own, as in the pod.
  const args = [
    ...shipped.filter((a) => !/^--(metrics|health-probe|webhook)-bind-address=/.test(a)),
    `--namespace=${ns}`,
  ]
  assert.ok(!args.some((a) => a.startsWith('--leader-election-namespace')), args.join(' '))
  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    ns,
    pod.serviceAccountName,
  )
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { token },
    namespace: ns,
  })
  let op: OperatorProcess | undefined
  defer(() => op?.kill('SIGKILL'))
  op = await startOperator('overlay', [...args, `--kubeconfig=${kubeconfig}`])
  const leases = admin.resource(CORE_TYPES.leases, ns)
  const lease = await eventually(
    async () => {
      const l = (await leases.get(leaseName)) as KubeObject & { spec?: { holderIdentity?: string } }
      assert.ok(l.spec?.holderIdentity, 'held')
      return l
    },
    { timeoutMs: 60_000, what: `the Lease ${ns}/${leaseName} is taken` },
  )
  assert.equal(lease.metadata.namespace, ns)
  assert.equal(await op.metric('leader_election_master_status'), 1)
})
