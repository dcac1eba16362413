/**
 * @module e2e-appservice — the end-to-end suite of the appservice operator, parameterised by how the
 * operator is installed ({@link OperatorInstaller}): the built artifact (dist/edgeop.cjs) as two
 * leader-elected processes with the installed Deployment's args, as the installed ServiceAccount
 * under exactly the installed RBAC (with the OwnerReferencesPermissionEnforcement admission plugin
 * on), talking to the real control plane through the fault proxy (which also counts their API
 * requests), with controller-manager, scheduler and KWOK so Deployments really become available.
 * Metrics are read as in production: over HTTPS, with the token of a ServiceAccount bound to the
 * installed metrics-reader ClusterRole. Each call uses namespaces and a Lease of its own, so two
 * test files can run it side by side on one control plane.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { retryOnConflict } from '../../src/client/retry-on-conflict.ts'
import type { Lease } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { FaultProxy } from '../controlplane/fault-proxy.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceWhere, condition, installAppServiceCrd } from './appservice.ts'
import { serviceAccountToken } from './deploy-manifests.ts'
import { adminClient } from './kube.ts'
import { metricsScraperToken } from './metrics-scraper.ts'
import type { InstalledOperator, OperatorInstaller } from './operator-install.ts'
import { type OperatorProcess, startOperator } from './operator-process.ts'
import { useTestEnv } from './test-env.ts'

const LEASE = { duration: 4000, renew: 3000, retry: 1000 }

/**
 * Registers, at the top level of a test file, the end-to-end tests against the operator as
 * `install` installs it (set-up in a `before` hook, cleanups in an `after` hook).
 */
export function appServiceE2eSuite(install: OperatorInstaller): void {
  const { env, setup, defer } = useTestEnv()
  let admin: KubeClient
  let proxy: FaultProxy
  let db: DatabaseStandin
  let ns: string
  let installed: InstalledOperator
  let args: string[]
  let metricsToken: string
  const ops: OperatorProcess[] = []

  setup(async () => {
    await env().startControllers()
    admin = adminClient(env(), env().server)
    defer(() => admin.close())
    await installAppServiceCrd(admin)
    ns = await env().createNamespace('e2e')
    db = await startDatabaseStandin()
    defer(() => db.close())
    // The Namespace, RBAC and ServiceAccount as installed; the operator runs as that ServiceAccount
    // with a bound token, as in its pod, and with the installed Deployment's args.
    installed = await install({
      env: env(),
      admin,
      defer,
      watchNamespace: ns,
      lease: LEASE,
      extraArgs: [`--database-api=${db.url}`, '--qps=50', '--burst=100'],
    })
    defer(() => admin.resource(CORE_TYPES.leases, installed.namespace).delete(installed.leaseName))
    const token = await serviceAccountToken(
      env().server,
      { caPem: env().caPem, ...env().admin },
      installed.namespace,
      installed.serviceAccount,
    )
    // A scraper, as Prometheus would be: its own ServiceAccount bound to the installed metrics-reader role.
    metricsToken = await metricsScraperToken(env(), admin, defer, ns, installed.metricsReaderRole)
    proxy = await env().startFaultProxy()
    defer(() => proxy.close())
    // The installed namespace, as the pod's in-cluster namespace file gives it: the Lease's default.
    const kubeconfig = await env().writeKubeconfig({
      server: proxy.url,
      credentials: { token },
      namespace: installed.namespace,
    })
    args = [...installed.args, `--kubeconfig=${kubeconfig}`]
    // Deferred last, so it runs first: the operators die before the proxy, the database and the
    // installation go.
    defer(() => {
      for (const op of ops) op.kill('SIGKILL')
    })
    ops.push(
      await startOperator('a', args, undefined, { metricsToken }),
      await startOperator('b', args, undefined, { metricsToken }),
    )
  })

  const apps = () => admin.resource(APPSERVICES, ns)
  const appWhere = (name: string, pred: (a: AppService) => boolean, what: string, timeoutMs?: number) =>
    appServiceWhere(apps(), name, pred, what, timeoutMs)
  async function leader(): Promise<OperatorProcess> {
    let found: OperatorProcess | undefined
    await eventually(
      async () => {
        for (const op of ops)
          if (
            op.child.exitCode === null &&
            (await op.metric('leader_election_master_status').catch(() => 0)) === 1
          )
            found = op
        return found !== undefined
      },
      { timeoutMs: 30_000, what: 'a leader' },
    )
    return found!
  }
  const reconciles = async (op: OperatorProcess) =>
    (await op.metric('controller_runtime_reconcile_total', { result: 'success' })) ?? 0

  test('create → Deployment and Service; Ready with the current observedGeneration; only the leader reconciles', async () => {
    const created = await apps().create({
      metadata: { name: 'web' },
      spec: { image: 'nginx:1.27', replicas: 2 },
    } as AppService)
    const ready = await appWhere('web', (a) => condition(a, 'Ready')?.status === 'True', 'Ready')
    assert.equal(ready.status?.observedGeneration, created.metadata.generation)
    assert.equal(ready.status?.readyReplicas, 2)
    for (const t of [CORE_TYPES.deployments, CORE_TYPES.services]) {
      const child = await admin.resource(t, ns).get('web')
      assert.equal(child.metadata.ownerReferences?.[0]?.name, 'web')
    }
    const lead = await leader()
    const other = ops.find((o) => o !== lead)!
    assert.ok((await reconciles(lead)) > 0, 'the leader reconciled')
    assert.equal(await reconciles(other), 0, 'the standby did not')
    assert.equal(await other.metric('leader_election_master_status'), 0)
    assert.equal(await lead.ready(), 200)
  })

  test('scale through the scale subresource; an image edit rolls out; a deleted child is recreated; drift is corrected', async () => {
    await retryOnConflict(async () => {
      const scale = await apps().getScale('web')
      return apps().updateScale({ ...scale, spec: { replicas: 3 } })
    })
    await appWhere(
      'web',
      (a) => a.status?.readyReplicas === 3 && condition(a, 'Ready')?.status === 'True',
      'scaled to 3',
    )
    await apps().patch('web', { spec: { image: 'nginx:1.28' } }, 'merge')
    const deps = admin.resource(CORE_TYPES.deployments, ns)
    const image = async () =>
      ((await deps.get('web')).spec as { template: { spec: { containers: { image: string }[] } } }).template
        .spec.containers[0]?.image
    await eventually(async () => (await image()) === 'nginx:1.28', { timeoutMs: 30_000, what: 'rollout' })
    const oldUid = (await deps.get('web')).metadata.uid
    await deps.delete('web')
    await eventually(
      async () =>
        (await deps.get('web').catch(() => undefined))?.metadata.uid !== undefined &&
        (await deps.get('web')).metadata.uid !== oldUid,
      { timeoutMs: 30_000, what: 'recreated' },
    )
    await deps.patch('web', { spec: { replicas: 9 } }, 'merge')
    await eventually(async () => ((await deps.get('web')).spec as { replicas: number }).replicas === 3, {
      timeoutMs: 30_000,
      what: 'drift corrected',
    })
  })

  test('an invalid spec: InvalidConfiguration, and no hot loop (API writes counted at the proxy)', async () => {
    await apps().create({ metadata: { name: 'bad' }, spec: { image: 'UPPER CASE' } } as AppService)
    await appWhere(
      'bad',
      (a) => condition(a, 'Ready')?.reason === 'InvalidConfiguration',
      'InvalidConfiguration',
    )
    const writes = () =>
      proxy.requests(
        (r) =>
          r.method !== 'GET' &&
          (r.path.endsWith('/appservices/bad') || r.path.endsWith('/appservices/bad/status')),
      ).length
    const before = writes()
    await new Promise((r) => setTimeout(r, 5000))
    assert.ok(writes() - before <= 1, `${writes() - before} writes to the invalid object in 5 s`)
  })

  test('database entries: exactly once despite apiserver 429/503s and database failures', async () => {
    proxy.addFault({
      method: 'PATCH',
      times: 3,
      action: { type: 'status', status: 503, retryAfterSeconds: 0 },
    })
    proxy.addFault({
      method: 'PATCH',
      times: 2,
      action: { type: 'status', status: 429, retryAfterSeconds: 1 },
    })
    db.failNext(3)
    const created = await apps().create({
      metadata: { name: 'withdb' },
      spec: { image: 'nginx:1.27', database: { enabled: true, class: 'small' } },
    } as AppService)
    const key = `appsrv-${created.metadata.uid}`
    await eventually(() => db.entries.has(key), { timeoutMs: 60_000, what: 'entry provisioned' })
    await appWhere('withdb', (a) => condition(a, 'Degraded')?.status === 'False', 'healthy')
    assert.deepEqual(
      db.created.filter((k) => k === key),
      [key],
    )
  })

  test('cut off from the apiserver: the leader steps down and exits 1, the standby turns unready, then ready and leading', async () => {
    const lead = await leader()
    const standby = ops.find((o) => o !== lead && o.child.exitCode === null)!
    const blackhole = proxy.addFault({ action: { type: 'drop' } })
    try {
      proxy.dropAll()
      assert.equal(await lead.exited, 1, 'leadership lost: exit non-zero so the pod restarts clean')
      assert.ok(
        lead.logs.some((l) => l.code === 'EDGEOP_ERR_LEADER'),
        'the exit names the lost leadership',
      )
      await eventually(async () => (await standby.ready()) === 500, {
        timeoutMs: 60_000,
        what: 'standby not ready while cut off',
      })
    } finally {
      blackhole.clear()
    }
    await eventually(async () => (await standby.ready()) === 200, {
      timeoutMs: 60_000,
      what: 'standby ready again',
    })
    assert.equal(await leader(), standby)
    // Kubernetes would restart the failed pod: so do we, to keep two replicas.
    ops.splice(ops.indexOf(lead), 1, await startOperator('c', args, undefined, { metricsToken }))
  })

  test('delete: cleanup first, the finalizer stays while the database API is down, then the object goes', async () => {
    const key = `appsrv-${(await apps().get('withdb')).metadata.uid}`
    db.down = true
    await apps().delete('withdb')
    // FinalizationFailed at the first failures; ExternalAPIUnavailable once the breaker opened.
    const stuck = await appWhere(
      'withdb',
      (a) => /^(FinalizationFailed|ExternalAPIUnavailable)$/.test(condition(a, 'Degraded')?.reason ?? ''),
      'cleanup failing while the API is down',
    )
    assert.ok(stuck.metadata.finalizers?.length)
    db.down = false
    await eventually(
      async () =>
        (await apps()
          .get('withdb')
          .catch(() => undefined)) === undefined,
      { timeoutMs: 90_000, what: 'deleted after cleanup' },
    )
    assert.equal(db.entries.has(key), false)
  })

  test('SIGKILL the leader: the standby takes over within leaseDuration + retryPeriod × jitter, and nothing is done twice', async () => {
    const old = await leader()
    const killedAt = Date.now()
    old.kill('SIGKILL')
    await old.exited
    const next = await leader()
    const takeover = Date.now() - killedAt
    assert.notEqual(next, old)
    assert.ok(takeover < LEASE.duration + LEASE.retry * 1.2 + 5000, `takeover after ${takeover} ms`)
    const c2 = await apps().create({
      metadata: { name: 'after-failover' },
      spec: { image: 'nginx:1.27', database: { enabled: true, class: 'small' } },
    } as AppService)
    await appWhere(
      'after-failover',
      (a) => condition(a, 'Ready')?.status === 'True',
      'handled by the new leader',
    )
    assert.ok(db.entries.has(`appsrv-${c2.metadata.uid}`))
    assert.equal(new Set(db.created).size, db.created.length, 'no database entry was ever created twice')
    process.stderr.write(`e2e: failover after SIGKILL took ${takeover} ms\n`)
  })

  test('SIGTERM the leader: it drains, releases the Lease and exits 0', async () => {
    const lead = await leader()
    lead.kill('SIGTERM')
    assert.equal(await lead.exited, 0)
    const lease = await admin.resource<Lease>(CORE_TYPES.leases, installed.namespace).get(installed.leaseName)
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'released')
    assert.ok(lead.logs.some((l) => l.msg === 'stopped'))
  })
}
