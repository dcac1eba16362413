/**
 * The AppService operator sharded over three replicas of the built artifact (`--shard`) on the real
 * control plane, each under deploy/'s rules (the ClusterRole's and the leader-election Role's, bound
 * in the test namespace to a client-certificate user): every AppService is owned by one live member; killing one moves its objects to the
 * others, which reconcile them again; adding one rebalances. Throughout, every database entry is
 * created exactly once, and the reconcile intervals the replicas log (`reconciled`, debug) never
 * overlap for one object across replicas.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { leaseRules, operatorRules } from '../../src/operators/appservice/manifests.ts'
import { SHARD_LABEL_PREFIX } from '../../src/sharding/shard.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import { appServiceSetup, condition } from '../support/appservice.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { useTestEnv } from '../support/test-env.ts'
import { RBAC } from './fixtures/nodeconfig-harness.ts'

const RING = 'appsrv-ring'
const LABEL = SHARD_LABEL_PREFIX + RING
const COUNT = 30
/** Short Leases so a dead member's objects move in seconds: 4 s lease, 3 s renew deadline, 1 s period. */
const LEASE_MS = 4_000
/** Convergence bound for the whole set (a loaded 2-core machine; not a latency assertion). */
const CONVERGE_MS = 120_000

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let db: DatabaseStandin
let ns: string
/** The replicas' kubeconfig: a user with deploy/'s rules only. */
let kubeconfig: string
const replicas: OperatorProcess[] = []

setup(async () => {
  ;({ client, db, ns } = await appServiceSetup({ env, defer }, 'shard'))
  // deploy/'s ClusterRole rules and leader-election Role rules, in one Role: the Leases live in the watched namespace.
  const user = `${ns}-operator`
  const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user }
  await client
    .resource(RBAC.roles, ns)
    .create({ metadata: { name: user }, rules: [...operatorRules(), ...leaseRules()] } as KubeObject)
  await client.resource(RBAC.roleBindings, ns).create({
    metadata: { name: user },
    roleRef: ref,
    subjects: [{ kind: 'User', apiGroup: ref.apiGroup, name: user }],
  } as KubeObject)
  const creds = await env().userKubeconfig(user)
  kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { certPem: creds.certPem, keyPem: creds.keyPem },
  })
})

const apps = () => client.resource(APPSERVICES, ns)
const start = async (name: string) => {
  const p = await startOperator(name, [
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${ns}`,
    '--shard',
    `--leader-election-id=${RING}`,
    `--leader-election-namespace=${ns}`,
    `--leader-election-lease-duration=${LEASE_MS / 1000}s`,
    '--leader-election-renew-deadline=3s',
    '--leader-election-retry-period=1s',
    `--database-api=${db.url}`,
    '--qps=100',
    '--burst=200',
    '--log-level=debug',
  ])
  defer(() => {
    p.kill('SIGKILL')
    return p.exited
  })
  replicas.push(p)
  return p
}
/** The member id a replica logs when it takes its Lease (`<ring>-<id>`). */
const idOf = async (p: OperatorProcess) => {
  const line = await p.waitForLog((l) => l.msg === 'watching' && String(l.informer).includes(LABEL))
  return String(line.informer).match(new RegExp(`${LABEL}=([0-9a-f]+)`))![1]!
}
/** Every AppService reconciled at its generation, its database ready, each owned by one of `owners`, each of which owns some. */
const converged = (owners: string[], what: string) =>
  eventually(
    async () => {
      const items = (await apps().list()).items
      const done = items.filter(
        (a) =>
          owners.includes(a.metadata.labels?.[LABEL] ?? '') &&
          a.status?.observedGeneration === a.metadata.generation &&
          condition(a, 'DatabaseReady')?.status === 'True',
      )
      const used = new Set(done.map((a) => a.metadata.labels?.[LABEL]))
      return items.length === COUNT && done.length === COUNT && used.size === owners.length && items
    },
    { timeoutMs: CONVERGE_MS, what, intervalMs: 250 },
  ).catch(async (err: Error) => {
    const state = (await apps().list()).items.map(
      (a) =>
        `${a.metadata.name}:${a.metadata.labels?.[LABEL]}:${a.status?.observedGeneration}/${a.metadata.generation}:${condition(a, 'DatabaseReady')?.reason}`,
    )
    const notes = replicas.flatMap((p) =>
      p.logs
        .filter((l) => l.level === 'warn' || l.level === 'error' || /shard|assigned/.test(String(l.msg)))
        .slice(-5)
        .map((l) => `${p.name} ${JSON.stringify(l)}`),
    )
    throw new Error(`${err.message}\n${state.join(' ')}\n${notes.join('\n')}`)
  })
const ownedBy = (items: AppService[]) => {
  const by = new Map<string, number>()
  for (const a of items) by.set(a.metadata.labels![LABEL]!, (by.get(a.metadata.labels![LABEL]!) ?? 0) + 1)
  return by
}
/** Raises every AppService's replicas, so each must be reconciled again. */
const touchAll = async (replicasWanted: number) => {
  for (const a of (await apps().list()).items)
    await apps().patch(a.metadata.name!, { spec: { replicas: replicasWanted } })
}

test('three replicas split the AppServices; a killed one’s move, an added one rebalances; no overlap, one entry each', async (t) => {
  const [a, b, c] = await Promise.all([start('shard-a'), start('shard-b'), start('shard-c')])
  const ids = await Promise.all([a, b, c].map(idOf))
  for (let i = 0; i < COUNT; i++)
    await apps().create({
      metadata: { name: `app-${i}` },
      spec: { image: 'nginx:1.27', replicas: 1, database: { enabled: true, class: 'standard' } },
    } as AppService)
  const first = ownedBy(await converged(ids, 'all reconciled by the three'))
  t.diagnostic(`owned: ${JSON.stringify([...first])}`)
  assert.equal(first.size, 3, 'every member owns some')

  // Kill one: its objects are taken over after its Lease expires, and reconciled again.
  const dead = ids[2]!
  const killedAt = Date.now()
  c.kill('SIGKILL')
  await c.exited
  await touchAll(2)
  const after = await converged(ids.slice(0, 2), 'the dead member’s objects moved and reconciled')
  const moved = Date.now() - killedAt
  t.diagnostic(`dead member's ${first.get(dead)} objects reconciled again ${moved} ms after the kill`)
  assert.deepEqual([...ownedBy(after).keys()].sort(), ids.slice(0, 2).sort())
  const takeovers = async (p: OperatorProcess) => (await p.metric('edgeop_shard_handovers_total')) ?? 0
  assert.ok((await takeovers(a)) + (await takeovers(b)) >= first.get(dead)!, 'takeovers counted')

  // Add one: it gets a share, drained to it by the others.
  const d = await start('shard-d')
  const idD = await idOf(d)
  await touchAll(3)
  const rebalanced = ownedBy(await converged([ids[0]!, ids[1]!, idD], 'rebalanced over three'))
  t.diagnostic(`owned after the join: ${JSON.stringify([...rebalanced])}`)
  assert.ok((rebalanced.get(idD) ?? 0) > 0, 'the new member owns some')
  // The gauge is the new member's cache: equal to the objects labelled for it once the drains have ended
  // (converged only says every object is reconciled by one of the three; the others may still be draining).
  await eventually(
    async () => (await d.metric('edgeop_shard_objects')) === ownedBy((await apps().list()).items).get(idD),
    { timeoutMs: CONVERGE_MS, what: 'edgeop_shard_objects equal to the objects labelled for the new member' },
  )

  // Exactly once: one entry per AppService, none created twice.
  assert.equal(db.entries.size, COUNT)
  assert.equal(new Set(db.created).size, db.created.length, `created twice: ${db.created}`)
  // No object reconciled by two replicas at once.
  const spans = replicas.flatMap((p) =>
    p.logs
      .filter((l) => l.msg === 'reconciled')
      .map((l) => ({ p: p.name, object: String(l.object), from: Number(l.from), to: Number(l.to) })),
  )
  assert.ok(spans.length >= 3 * COUNT, `reconciles logged: ${spans.length}`)
  const byObject = new Map<string, typeof spans>()
  for (const s of spans) byObject.set(s.object, [...(byObject.get(s.object) ?? []), s])
  for (const [object, list] of byObject) {
    const ended = new Map<string, number>()
    for (const s of list.sort((x, y) => x.from - y.from)) {
      for (const [p, end] of ended)
        assert.ok(
          p === s.p || s.from >= end,
          `${object}: ${s.p} started at ${s.from}, ${p} ended at ${end}\n${replicas
            .flatMap((r) =>
              r.logs
                .filter((l) => String(l.object).includes(object.split('/')[1]! + '"') || l.object === object)
                .map((l) => `${r.name} ${JSON.stringify(l)}`),
            )
            .join('\n')}`,
        )
      ended.set(s.p, Math.max(ended.get(s.p) ?? 0, s.to))
    }
  }
})
