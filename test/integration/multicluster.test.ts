/**
 * The AppService operator (the built artifact, as a process) against two independent control
 * planes: the shared one is its home cluster (leader election) and a second envtest kube-apiserver
 * + etcd of this file's own is the member `east` of its `--clusters-file`. Same-named AppServices
 * in both get their Deployments in their own cluster and separate database entries; with `east`
 * stopped the home cluster keeps reconciling while `east` reports not synced (readiness still
 * passes); restarted on the same ports with the same data, `east` converges again; removed from the
 * file at runtime, it is disengaged.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { NODE_FLAGS } from '../../build/node-flags.ts'
import type { Deployment } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES, type AppService, appServiceCrd } from '../../src/operators/appservice/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { startTestEnvironment, type TestEnvironment } from '../../src/testing/test-environment.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceWhere, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { ARTIFACT, type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { scratchDirs } from '../support/scratch.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
const scratch = scratchDirs('edgeop-multicluster-')
/** The home cluster's client, the member `east`, the database stand-in and the operator process. */
let home: KubeClient, east: TestEnvironment, db: DatabaseStandin, op: OperatorProcess
/** The namespace (the same name in both clusters) and the clusters file. */
let ns: string, clustersFile: string

setup(async () => {
  home = adminClient(env(), env().server)
  await installAppServiceCrd(home)
  east = await startTestEnvironment({ crds: [appServiceCrd()] })
  db = await startDatabaseStandin()
  defer(
    () => home.close(),
    () => east.stop(),
    () => db.close(),
  )
  ns = await env().createNamespace('multicluster')
  await east.client.resource(CORE_TYPES.namespaces).create({ metadata: { name: ns } })
  clustersFile = join(await scratch(), 'clusters')
  await writeFile(clustersFile, `# member clusters\neast=${east.kubeconfig}\n`)
  op = await startOperator('multicluster', [
    `--kubeconfig=${env().kubeconfig}`,
    `--clusters-file=${clustersFile}`,
    `--namespace=${ns}`,
    `--database-api=${db.url}`,
    '--leader-elect',
    `--leader-election-id=edgeop-${ns}`,
    `--leader-election-namespace=${ns}`,
  ])
  defer(async () => {
    op.kill('SIGTERM')
    await op.exited
  })
})

const apps = (c: KubeClient) => c.resource(APPSERVICES, ns)
const deployments = (c: KubeClient) => c.resource<Deployment>(CORE_TYPES.deployments, ns)
const create = (c: KubeClient, name: string, image: string) =>
  apps(c).create({
    metadata: { name },
    spec: { image, database: { enabled: true, class: 'standard' } },
  } as AppService)
/** The AppService `name` in `c` is reconciled at its generation, its database entry ready, its Deployment running `image`. */
async function converged(c: KubeClient, name: string, image: string, what: string): Promise<AppService> {
  const a = await appServiceWhere(
    apps(c),
    name,
    (x) => x.status?.observedGeneration === x.metadata.generation && x.status?.database?.phase === 'Ready',
    what,
    90_000,
  )
  await eventually(
    async () =>
      (
        await deployments(c)
          .get(name)
          .catch(() => undefined)
      )?.spec?.template?.spec?.containers?.[0]?.image === image,
    { timeoutMs: 60_000, what: `${what}: Deployment runs ${image}` },
  )
  return a
}
const synced = () => op.metric('edgeop_cluster_synced', { cluster: 'east' })
const setImage = async (c: KubeClient, name: string, image: string) => {
  const a = await apps(c).get(name)
  await apps(c).update({ ...a, spec: { ...a.spec, image } })
}

test('same-named AppServices in two clusters: children in their own cluster, one database entry each', async () => {
  const [h, e] = await Promise.all([
    create(home, 'shop', 'nginx:1.27'),
    create(east.client, 'shop', 'nginx:1.26'),
  ])
  await converged(home, 'shop', 'nginx:1.27', 'home shop')
  await converged(east.client, 'shop', 'nginx:1.26', 'east shop')
  assert.ok(db.entries.has(`appsrv-${h.metadata.uid}`), 'the home entry keeps the single-cluster key')
  assert.ok(db.entries.has(`appsrv-east-${e.metadata.uid}`), 'the member entry names its cluster')
  assert.equal(db.created.length, 2)
  await eventually(async () => (await synced()) === 1, { timeoutMs: 30_000, what: 'east reported synced' })
  await op.waitForLog((l) => l.msg === 'starting workers' && l.cluster === 'east')
  const lease = (c: KubeClient) =>
    c
      .resource(CORE_TYPES.leases, ns)
      .get(`edgeop-${ns}`)
      .catch(() => undefined)
  assert.ok(await lease(home), 'leader election runs in the home cluster')
  assert.equal(await lease(east.client), undefined, 'and not in the member')
})

test('east down: home keeps reconciling, east reports not synced, readiness passes; east back: it converges', async () => {
  await east.stopControlPlane()
  await eventually(async () => (await synced()) === 0, {
    timeoutMs: 60_000,
    what: 'east reported not synced',
  })
  const readyz = await fetch(`${op.probesUrl}/readyz?verbose`)
  const body = await readyz.text()
  assert.equal(readyz.status, 200, body)
  assert.match(body, /clusters ok: not synced: east/)
  await setImage(home, 'shop', 'nginx:1.28')
  await create(home, 'cart', 'nginx:1.27')
  await converged(home, 'shop', 'nginx:1.28', 'home shop updated while east is down')
  await converged(home, 'cart', 'nginx:1.27', 'home cart created while east is down')
  await east.startControlPlane()
  await eventually(async () => (await synced()) === 1, {
    timeoutMs: 120_000,
    what: 'east reported synced again',
  })
  await setImage(east.client, 'shop', 'nginx:1.28')
  await create(east.client, 'cart', 'nginx:1.26')
  await converged(east.client, 'shop', 'nginx:1.28', 'east shop updated after the restart')
  await converged(east.client, 'cart', 'nginx:1.26', 'east cart created after the restart')
})

test('the cluster list changes at runtime: east removed from the file is disengaged', async () => {
  await writeFile(clustersFile, '# no members\n')
  await eventually(async () => (await synced()) === undefined, {
    timeoutMs: 30_000,
    what: 'east no longer reported',
  })
  await setImage(east.client, 'shop', 'nginx:1.29')
  await converged(home, 'cart', 'nginx:1.27', 'home still reconciled')
  await new Promise((r) => setTimeout(r, 3000))
  const d = await deployments(east.client).get('shop')
  assert.equal(d.spec?.template?.spec?.containers?.[0]?.image, 'nginx:1.28', 'east is no longer reconciled')
})

test('a clusters file that cannot be read fails start-up with one line naming it', async () => {
  const missing = join(await scratch(), 'no-such-file')
  const run = promisify(execFile)
  const args = [...NODE_FLAGS, ARTIFACT, `--kubeconfig=${env().kubeconfig}`, `--clusters-file=${missing}`]
  const failed = await run(process.execPath, args).then(
    () => assert.fail('edgeop started with a missing clusters file'),
    (err: { code?: number; stderr?: string }) => err,
  )
  assert.equal(failed.code, 2)
  const lines = (failed.stderr ?? '').trim().split('\n')
  assert.equal(lines.length, 1, failed.stderr)
  const line = JSON.parse(lines[0]!) as { level: string; msg: string }
  assert.deepEqual(
    [line.level, line.msg],
    ['error', `edgeop cannot start: clusters file ${missing}: cannot read it (ENOENT)`],
  )
})
