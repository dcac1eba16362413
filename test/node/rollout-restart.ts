/**
 * @module rollout-restart — `kubectl rollout restart` of an operator install on the real node, with
 * AppServices created and changed while the replicas hand over and the operator provisioning into
 * the database stand-in: each old pod stops gracefully on kubelet's SIGTERM (the leader releases
 * its Lease), every AppService written meanwhile is reconciled (its change observed), and the
 * database holds exactly one entry per AppService, none created twice.
 */
import { type FileHandle, open } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { databaseKey } from '../../src/operators/appservice/desired.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import type { OperatorInstall } from './install-checks.ts'
import {
  APP_IMAGE,
  APP_NAMESPACE,
  at,
  DEPLOYMENTS,
  leaseHolder,
  type Pod,
  pods,
  ready,
  say,
  WAIT_MS,
} from './node-cluster.ts'

/** How often an AppService is created while the restart runs: several per handover, which took 7 to 10 s unloaded. */
const CREATE_EVERY_MS = 1000
/** At most this many created during the restart (a slow node must not pile up objects); a cap of 12 was reached before a loaded node's restart ended. */
const MAX_CREATED = 20
/** The operator's last log line when it exits by itself: after a drain, or after an error. */
const LAST_LINES = ['stopped', 'edgeop stopped with an error']
/** How long an exited container's last log lines may take to reach the file (containerd writes them). */
const LOG_TAIL_MS = 10_000
/** The entry's class in the stand-in; any class the API accepts. */
const DB = { enabled: true, class: 'small' }

/** The whole file behind `handle`, from its start (the path may be gone). */
async function readWhole(handle: FileHandle): Promise<string> {
  const { size } = await handle.stat()
  const buffer = Buffer.alloc(size)
  await handle.read(buffer, 0, size, 0)
  return buffer.toString('utf8')
}

/** The install's pods once `replicas` of them, none of `oldNames`, are Ready and no old one is left. */
export async function rolledOut(client: KubeClient, install: OperatorInstall, oldNames: Set<string>) {
  let after: Pod[] = []
  await eventually(
    async () => {
      after = await pods(client, install.namespace, install.selector)
      return (
        after.length === install.replicas && after.every((p) => !oldNames.has(p.metadata.name!) && ready(p))
      )
    },
    {
      timeoutMs: WAIT_MS,
      what: () => `${install.replicas} new operator pods Ready (${after.map((p) => p.metadata.name)})`,
    },
  )
  return after
}

/**
 * The restart, with the operator already wired to `db` (`--database-api`). AppService `hello`
 * (no database) must exist in APP_NAMESPACE.
 */
export async function rolloutRestart(client: KubeClient, install: OperatorInstall, db: DatabaseStandin) {
  const apps = client.resource<AppService>(APPSERVICES, APP_NAMESPACE)
  const withDb = (name: string) =>
    apps.create({
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'AppService',
      metadata: { name },
      spec: { image: APP_IMAGE, replicas: 0, database: DB },
    } as AppService)
  // Before the restart: one entry, to be changed while the replicas hand over.
  const first = await withDb('db-before')
  await eventually(async () => db.entries.has(databaseKey(first)), {
    timeoutMs: WAIT_MS,
    what: 'the database entry of an AppService created before the restart',
  })

  const before = await pods(client, install.namespace, install.selector)
  const oldLeader = await leaseHolder(client, install.namespace, install.deployment)
  // kubelet deletes a pod's log files with the pod: hold them open to read them afterwards. The
  // running container's file is `<restartCount>.log`: an operator container restarted before (a
  // probe on a loaded node) writes to 1.log, and 0.log held nothing of this stop (the cold CI run).
  const logOf = (p: Pod) =>
    `${process.env.EDGEOP_NODE_WORK}/pod-logs/${install.namespace}_${p.metadata.name}_${p.metadata.uid}/operator/${
      p.status?.containerStatuses?.find((c) => c.name === 'operator')?.restartCount ?? 0
    }.log`
  const logs = await Promise.all(before.map((p) => open(logOf(p), 'r')))
  await client.resource(DEPLOYMENTS, install.namespace).patch(
    install.deployment,
    {
      spec: {
        template: {
          metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
        },
      },
    },
    'merge',
  )
  const restartedAt = performance.now()
  let handedOver = false
  const rollout = rolledOut(client, install, new Set(before.map((p) => p.metadata.name!))).finally(() => {
    handedOver = true
  })
  // Written while the replicas hand over: changes to two AppServices, then a create every second.
  // A refusal (the webhook Service without a ready endpoint) is what a user would meet: recorded.
  const refused: { name: string; message: string }[] = []
  const attempt = async (name: string, write: () => Promise<unknown>) => {
    try {
      await write()
    } catch (err) {
      refused.push({ name, message: err instanceof Error ? err.message : String(err) })
    }
  }
  await attempt('db-before', () => apps.patch('db-before', { spec: { replicas: 1 } }, 'merge'))
  await attempt('hello', () => apps.patch('hello', { spec: { database: DB } }, 'merge'))
  const created: string[] = []
  while (!handedOver && created.length < MAX_CREATED) {
    const name = `during-restart-${created.length}`
    created.push(name)
    await attempt(name, () => withDb(name))
    await sleep(CREATE_EVERY_MS)
  }
  const after = await rollout
  const handoverMs = Math.round(performance.now() - restartedAt)

  const stops = []
  for (const [i, p] of before.entries()) {
    // The log's tail reaches the file after the pod is gone from the API (seen on a loaded node):
    // read until the process's last line, or what is there after LOG_TAIL_MS (a killed process has none).
    let text = ''
    // Complete lines that are log records: the file is read while containerd may be writing.
    const msgs = () =>
      text
        .slice(0, text.lastIndexOf('\n') + 1)
        .split('\n')
        .flatMap((l) => {
          try {
            return [(JSON.parse(l.slice(l.indexOf('{'))) as { msg: string }).msg]
          } catch {
            return []
          }
        })
    await eventually(
      async () => {
        text = await readWhole(logs[i]!)
        return LAST_LINES.includes(msgs().at(-1) ?? '')
      },
      { timeoutMs: LOG_TAIL_MS, what: '' },
    ).catch(() => {})
    await logs[i]!.close()
    stops.push({
      pod: p.metadata.name,
      wasLeader: oldLeader.startsWith(`${p.metadata.name}_`),
      releasedLease: msgs().includes('released the lease'),
      last: msgs().at(-1),
    })
  }
  say('rollout restart', {
    at: at(),
    handoverMs,
    stops,
    newPods: after.map((p) => p.metadata.name),
    created: created.length,
    refused,
  })

  // Every AppService written: its latest generation observed, its Deployment at its replicas and,
  // for those with a database, its entry.
  const written = ['db-before', 'hello', ...created.filter((n) => !refused.some((r) => r.name === n))]
  let pending: string[] = []
  await eventually(
    async () => {
      pending = []
      for (const name of written) {
        const app = await apps.get(name)
        const dep = (await client
          .resource(DEPLOYMENTS, APP_NAMESPACE)
          .get(name)
          .catch(() => undefined)) as (KubeObject & { spec: { replicas: number } }) | undefined
        const done =
          app.status?.observedGeneration === app.metadata.generation &&
          dep?.spec.replicas === (app.spec.replicas ?? 1) &&
          db.entries.has(databaseKey(app))
        if (!done) pending.push(name)
      }
      return pending.length === 0
    },
    { timeoutMs: WAIT_MS, what: () => `the AppServices written during the restart reconciled (${pending})` },
  )
  say('database after restart', await databaseFindings(client, db))
}

/** The stand-in's entries against the AppServices that want one: keys missing, extra, created twice. */
export async function databaseFindings(client: KubeClient, db: DatabaseStandin) {
  const all = (await client.resource<AppService>(APPSERVICES, APP_NAMESPACE).list()).items
  const wanted = all.filter((a) => a.spec.database?.enabled === true)
  const keys = new Set(wanted.map((a) => databaseKey(a)))
  return {
    at: at(),
    appServicesWithDatabase: wanted.length,
    entries: db.entries.size,
    missing: wanted.filter((a) => !db.entries.has(databaseKey(a))).map((a) => a.metadata.name),
    extra: [...db.entries.keys()].filter((k) => !keys.has(k)),
    createdTwice: [...new Set(db.created.filter((k, i) => db.created.indexOf(k) !== i))],
    creates: db.created.length,
  }
}
