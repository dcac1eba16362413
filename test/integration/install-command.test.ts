/**
 * `edgeop install` / `edgeop uninstall` and `npm start` on an existing cluster, as a user runs
 * them (the CLI as a process, against the real apiserver): install applies the CRDs and RBAC by
 * server-side apply with the operator's field manager and is idempotent; uninstall refuses (exit
 * 3) while an AppService exists, removes everything but the Namespace with --force or once none
 * is left; `npm start` installs a missing CRD and says so. On a private control plane: it deletes
 * CRDs, which on the shared one other files' objects would hold.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService, appServiceCrd } from '../../src/operators/appservice/api.ts'
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../src/operators/appservice/deployment-names.ts'
import { operatorRules } from '../../src/operators/appservice/manifests.ts'
import { FIELD_MANAGER } from '../../src/operators/appservice/reconcile.ts'
import { nodeConfigCrd } from '../../src/operators/nodeconfig/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const ROOT = join(import.meta.dirname, '../..')
// A control plane of its own: uninstall --force deletes the CRDs, and on the shared plane other files'
// AppServices (with finalizers and no operator left to remove them) would keep a deleted CRD terminating.
const { env, setup, defer } = useTestEnv({ private: true })
let admin: KubeClient

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  // Leave the cluster as the other files expect it: the CRDs installed.
  defer(() => installAppServiceCrd(admin))
})

/** `edgeop <args>` against the test apiserver: exit code, stdout, stderr. */
function edgeop(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'src/main.ts'), ...args, `--kubeconfig=${env().kubeconfig}`],
    {
      encoding: 'utf8',
    },
  )
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const rbac = (resource: string, namespaced: boolean) => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespaced,
  kind: '',
})
const crds = () => admin.resource(CORE_TYPES.customResourceDefinitions)
const gone = async (get: () => Promise<unknown>) =>
  get().then(
    () => false,
    (e: unknown) => e instanceof ApiError && e.status === 404,
  )

test('install applies the CRDs (Established), the Namespace and the RBAC with the operator field manager; a second run changes nothing', async () => {
  const first = edgeop('install')
  assert.equal(first.status, 0, first.stderr)
  for (const name of [appServiceCrd().metadata.name, nodeConfigCrd().metadata.name]) {
    assert.match(
      first.stdout,
      new RegExp(`applied CustomResourceDefinition/${name.replaceAll('.', '\\.')}\\n`),
    )
    const crd = await crds().get(name)
    const conditions = (crd.status as { conditions: { type: string; status: string }[] }).conditions
    assert.ok(
      conditions.some((c) => c.type === 'Established' && c.status === 'True'),
      `${name} Established`,
    )
  }
  const role = (await admin.resource(rbac('clusterroles', false)).get(OPERATOR_NAME)) as KubeObject & {
    rules: unknown
  }
  assert.deepEqual(role.rules, operatorRules())
  assert.ok(
    role.metadata.managedFields?.some((f) => f.manager === FIELD_MANAGER && f.operation === 'Apply'),
    'applied server-side by the operator field manager',
  )
  const rv = role.metadata.resourceVersion
  const again = edgeop('install')
  assert.equal(again.status, 0, again.stderr)
  assert.equal(
    (await admin.resource(rbac('clusterroles', false)).get(OPERATOR_NAME)).metadata.resourceVersion,
    rv,
  )
  await admin
    .resource(
      { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true, kind: 'ServiceAccount' },
      OPERATOR_NAMESPACE,
    )
    .get(OPERATOR_NAME)
})

test('uninstall refuses while an AppService exists (exit 3, naming it and --force), then removes all but the Namespace', async () => {
  const ns = await env().createNamespace('uninstall')
  await eventually(
    async () =>
      (await admin.mapper
        .forApiVersionKind('platform.example.com/v1alpha1', 'AppService')
        .catch(() => undefined)) !== undefined,
    { timeoutMs: 30_000, what: 'AppService discoverable' },
  )
  await admin
    .resource(APPSERVICES, ns)
    .create({ metadata: { name: 'kept' }, spec: { image: 'nginx:1.27' } } as AppService)
  const refused = edgeop('uninstall')
  assert.equal(refused.status, 3, refused.stderr)
  assert.match(
    refused.stderr,
    new RegExp(`refused: 1 AppService \\(e\\.g\\. ${ns}/kept\\) still exist.*--force`),
  )
  await crds().get(appServiceCrd().metadata.name) // still there
  await admin.resource(rbac('clusterroles', false)).get(OPERATOR_NAME)

  const forced = edgeop('uninstall', '--force')
  assert.equal(forced.status, 0, forced.stderr)
  assert.match(forced.stdout, new RegExp(`kept Namespace/${OPERATOR_NAMESPACE}`))
  assert.ok(
    await gone(() => admin.resource(rbac('clusterroles', false)).get(OPERATOR_NAME)),
    'ClusterRole deleted',
  )
  assert.ok(
    await gone(() =>
      admin.resource(rbac('roles', true), OPERATOR_NAMESPACE).get(`${OPERATOR_NAME}-leader-election`),
    ),
  )
  await eventually(async () => gone(() => crds().get(appServiceCrd().metadata.name)), {
    timeoutMs: 30_000,
    what: 'AppService CRD deleted',
  })
  await admin.resource(CORE_TYPES.namespaces).get(OPERATOR_NAMESPACE) // kept

  const nothing = edgeop('uninstall')
  assert.equal(nothing.status, 0, nothing.stderr)
  assert.match(nothing.stdout, /ClusterRole\/edgeop-appservice was not there/)
})

test('usage errors exit 2 with one line; an unreachable cluster exits 1 naming the object', () => {
  const typo = spawnSync(process.execPath, [join(ROOT, 'src/main.ts'), 'uninstall', '--forse'], {
    encoding: 'utf8',
  })
  assert.equal(typo.status, 2)
  assert.match(typo.stderr, /--forse/)
  assert.equal(typo.stderr.trim().split('\n').length, 1)
  const down = spawnSync(
    process.execPath,
    [join(ROOT, 'src/main.ts'), 'install', `--kubeconfig=${join(ROOT, 'nope')}`],
    {
      encoding: 'utf8',
    },
  )
  assert.equal(down.status, 1)
  assert.match(down.stderr, /nope/)
})

test('npm start on a cluster without the CRD installs it and says so, then runs the operator', async () => {
  await eventually(async () => gone(() => crds().get(appServiceCrd().metadata.name)), {
    timeoutMs: 30_000,
    what: 'no AppService CRD',
  })
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'build/start.ts'),
      '--log-format=json',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
    ],
    {
      env: { ...process.env, KUBECONFIG: env().kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  )
  defer(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL')
  })
  let output = ''
  const collect = (d: Buffer): void => {
    output += d.toString()
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  await eventually(async () => /"msg":"starting edgeop"/.test(output), {
    timeoutMs: 60_000,
    what: `the operator starting; output so far: ${output.slice(-500)}`,
  })
  assert.match(output, /the AppService CRD is not installed: running `edgeop install`/)
  assert.match(output, /npm start: installed the CRDs and RBAC/)
  await crds().get(appServiceCrd().metadata.name)
  process.kill(-child.pid!, 'SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
})
