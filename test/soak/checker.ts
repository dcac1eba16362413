/**
 * @module checker — compares what the operator and the agents made of the world with what
 * the driver asked for: AppServices (status, children), database entries, node files and
 * NodeConfig status. The apiserver's objects are the truth; the driver's memory says when
 * each thing last changed, so a difference counts only once it is older than the bound.
 */
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { NODECONFIGREPORTS } from '../../src/operators/nodeconfig/report-api.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import { rolloutProblems } from './rollout-check.ts'
import { duplicates } from './stats.ts'
import { INVALID_IMAGE, managedFiles, RUN_LABEL, type SoakNode, type Workload } from './workload.ts'

/** Invariant ids the checker reports under. */
export const CONVERGED = 'appservice-converged'
export const DATABASE = 'database-exactly-once'
export const NODE_FILES = 'node-files'

/** One difference found. */
export interface Problem {
  invariant: typeof CONVERGED | typeof DATABASE | typeof NODE_FILES
  message: string
}

/** The result of one comparison. */
export interface Evaluation {
  /** Items compared per invariant (including the ones with problems). */
  checked: Record<Problem['invariant'], number>
  problems: Problem[]
  /** Items not compared yet because they changed less than the bound ago. */
  young: number
  /** Convergence latencies (ms after the last change) seen for the first time in this round. */
  latencies: number[]
}

/** The driver writes exactly one kind of invalid spec. */
const valid = (app: AppService): boolean => app.spec.image !== INVALID_IMAGE

interface DeploymentLike extends KubeObject {
  status?: {
    observedGeneration?: number
    replicas?: number
    updatedReplicas?: number
    readyReplicas?: number
  }
  spec?: {
    replicas?: number
    template?: { spec?: { containers?: { image?: string; ports?: { containerPort?: number }[] }[] } }
  }
}

/** Options of {@link Checker}. */
export interface CheckerOptions {
  admin: KubeClient
  db: DatabaseStandin
  workload: Workload
  namespaces: readonly string[]
  nodes: readonly SoakNode[]
  run: string
  start: number
  /** A change older than this must be reflected everywhere. */
  boundMs: number
  /**
   * ms since start when the database last came back from an outage (now while it is down):
   * an outage legitimately makes AppServices Degraded and blocks deletions, so those count
   * only once they are older than the bound from then.
   */
  databaseSettledAt?: () => number
  /**
   * ms since start when the last fault that can hold up any AppService (a hung or slow database call
   * holding the single worker, a revoked RBAC rule) ended, plus its allowance (now while one is on):
   * every AppService is due only once the bound has passed from then.
   */
  operatorSettledAt?: () => number
}

/** The checker. `evaluate()` reads the world once and returns the differences. */
export class Checker {
  readonly #o: CheckerOptions

  constructor(options: CheckerOptions) {
    this.#o = options
  }

  /**
   * Reads everything once and compares. `final`: every change counts as old (the driver
   * has stopped and the bound has passed). Throws when the apiserver cannot be read.
   */
  async evaluate(final = false): Promise<Evaluation> {
    const now = Date.now() - this.#o.start
    const ev: Evaluation = {
      checked: { [CONVERGED]: 0, [DATABASE]: 0, [NODE_FILES]: 0 },
      problems: [],
      young: 0,
      latencies: [],
    }
    const old = (changedAt: number): boolean => {
      const ok = final || now - changedAt >= this.#o.boundMs
      if (!ok) ev.young++
      return ok
    }
    // The database first, then the apiserver: an entry whose object is created after this
    // snapshot cannot be mistaken for a leak.
    const dbSettled = this.#o.databaseSettledAt?.() ?? Number.NEGATIVE_INFINITY
    const opSettled = this.#o.operatorSettledAt?.() ?? Number.NEGATIVE_INFINITY
    const entries = new Map(this.#o.db.entries)
    const created = [...this.#o.db.created]
    // Records whose create had returned before the lists below were sent: if absent from them, they are gone.
    const settled = new Set(
      [...this.#o.workload.apps].filter(([, r]) => r.createdAt !== undefined).map(([k]) => k),
    )
    await this.#apps(ev, entries, created, settled, { db: dbSettled, op: opSettled }, old, now)
    await this.#nodes(ev, old)
    return ev
  }

  async #apps(
    ev: Evaluation,
    entries: Map<string, { key: string; name: string; namespace: string }>,
    created: string[],
    settled: ReadonlySet<string>,
    faultsSettled: { db: number; op: number },
    old: (t: number) => boolean,
    now: number,
  ): Promise<void> {
    const { admin, workload } = this.#o
    // Only problems are excused while a fault may still hold them up (an object found converged counts
    // as a pass whenever it is due): database faults hold up what needs the database (Degraded,
    // deletions, entries), the operator-wide ones anything.
    const { op: opSettled } = faultsSettled
    const dbHeld = Math.max(faultsSettled.db, opSettled)
    const problem = (invariant: Problem['invariant'], message: string) =>
      ev.problems.push({ invariant, message })
    const live = new Map<string, AppService>()
    const deployments = new Map<string, DeploymentLike>()
    const services = new Map<string, KubeObject>()
    for (const ns of this.#o.namespaces) {
      const [apps, deps, svcs] = await Promise.all([
        admin.resource(APPSERVICES, ns).list(),
        admin
          .resource(CORE_TYPES.deployments, ns)
          .list({ labelSelector: 'app.kubernetes.io/managed-by=edgeop' }),
        admin
          .resource(CORE_TYPES.services, ns)
          .list({ labelSelector: 'app.kubernetes.io/managed-by=edgeop' }),
      ])
      for (const a of apps.items) live.set(`${ns}/${a.metadata.name}`, a)
      for (const d of deps.items) deployments.set(`${ns}/${d.metadata.name}`, d as DeploymentLike)
      for (const s of svcs.items) services.set(`${ns}/${s.metadata.name}`, s)
    }

    // Database: never the same key created twice.
    const dup = duplicates(created)
    ev.checked[DATABASE]++
    for (const key of dup.slice(0, 5)) {
      const history = this.#o.db.requests
        .filter((r) => r.key === key)
        .map((r) => `${r.method} ${r.status}`)
        .join(', ')
      const owner = workload.appByUid(key.replace(/^appsrv-/, ''))
      problem(
        DATABASE,
        `database entry ${key}${owner ? ` (${owner.ns}/${owner.name})` : ''} created more than once; its requests: ${history}`,
      )
    }

    for (const [key, record] of workload.apps) {
      const obj = live.get(key)
      if (obj !== undefined && record.uid === undefined) record.uid = obj.metadata.uid // the create's answer was lost
      if (obj === undefined) {
        // Gone: deleted by the driver (or a delete whose answer was lost), or never created.
        if (record.deletedAt === undefined && settled.has(key)) record.deletedAt = record.lastChange
        continue
      }
      if (record.deletedAt !== undefined) {
        if (old(Math.max(record.deletedAt, dbHeld))) {
          ev.checked[CONVERGED]++
          problem(
            CONVERGED,
            `${key} still exists, deleted at +${(record.deletedAt / 1000).toFixed(0)} s (deletionTimestamp ${obj.metadata.deletionTimestamp ?? 'none'}, finalizers ${JSON.stringify(obj.metadata.finalizers ?? [])}, status ${JSON.stringify(obj.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`))})`,
          )
        }
        continue
      }
      if (obj.metadata.deletionTimestamp !== undefined) continue // deletion seen before the driver's answer
      const why = this.#appProblem(obj, deployments.get(key), services.get(key))
      if (why === undefined && record.convergedGeneration !== obj.metadata.generation && !record.creating) {
        // Seen converged at this generation for the first time (young or not): its latency.
        record.convergedGeneration = obj.metadata.generation
        if (valid(obj)) ev.latencies.push(now - record.lastChange)
      }
      if (!old(record.lastChange)) continue
      // Not converged while a fault window (its end plus allowance) is less than the bound ago: not yet due.
      if (why !== undefined && !old(why.startsWith('Degraded') ? dbHeld : opSettled)) continue
      ev.checked[CONVERGED]++
      if (why !== undefined) problem(CONVERGED, `${key} (generation ${obj.metadata.generation}): ${why}`)
      // Database: one entry per live, valid AppService with a database.
      if (!valid(obj)) continue // invalid spec: the operator does not touch it
      const dbKey = `appsrv-${obj.metadata.uid}`
      const wants = obj.spec.database?.enabled === true
      const entry = entries.get(dbKey)
      let dbWhy: string | undefined
      if (wants && entry === undefined) dbWhy = `${key}: no database entry ${dbKey}`
      else if (
        wants &&
        (entry!.namespace !== obj.metadata.namespace || entry!.name !== key.replace('/', '-'))
      )
        dbWhy = `${key}: entry ${dbKey} is for ${entry!.namespace}/${entry!.name}`
      else if (!wants && entry !== undefined) dbWhy = `${key}: database disabled but ${dbKey} remains`
      if (dbWhy !== undefined && !old(dbHeld)) continue
      ev.checked[DATABASE]++
      if (dbWhy !== undefined) problem(DATABASE, dbWhy)
    }

    // Database: no entry for an object that is gone (or never ours).
    for (const dbKey of entries.keys()) {
      const uid = dbKey.replace(/^appsrv-/, '')
      const record = workload.appByUid(uid)
      ev.checked[DATABASE]++
      if (record === undefined) {
        if (![...live.values()].some((a) => a.metadata.uid === uid))
          problem(DATABASE, `entry ${dbKey} belongs to no AppService the soak created`)
        continue
      }
      const key = `${record.ns}/${record.name}`
      if (record.deletedAt !== undefined && old(Math.max(record.deletedAt, dbHeld)) && !live.has(key))
        problem(
          DATABASE,
          `entry ${dbKey} of ${key} leaked: the AppService was deleted at +${(record.deletedAt / 1000).toFixed(0)} s`,
        )
    }
  }

  /** Why a live, settled AppService is not converged, or undefined. */
  #appProblem(
    app: AppService,
    dep: DeploymentLike | undefined,
    svc: KubeObject | undefined,
  ): string | undefined {
    const gen = app.metadata.generation
    const ready = app.status?.conditions?.find((c) => c.type === 'Ready')
    if (!valid(app)) {
      if (ready?.reason !== 'InvalidConfiguration' || ready.observedGeneration !== gen)
        return `invalid spec not reported: Ready ${JSON.stringify(ready)}`
      return undefined
    }
    const ds = dep?.status ?? {}
    const depState =
      dep === undefined
        ? 'no Deployment'
        : `Deployment generation ${dep.metadata.generation}, status ${JSON.stringify({ observedGeneration: ds.observedGeneration, replicas: ds.replicas, updatedReplicas: ds.updatedReplicas, readyReplicas: ds.readyReplicas })}`
    if (app.status?.observedGeneration !== gen)
      return `status.observedGeneration ${app.status?.observedGeneration}; ${depState}`
    if (ready?.status !== 'True' || ready.observedGeneration !== gen)
      return `Ready ${ready?.status}/${ready?.reason} (${ready?.message}) at generation ${ready?.observedGeneration}; ${depState}`
    const replicas = app.spec.replicas ?? 1
    if (dep === undefined) return 'no Deployment'
    if ((app.status?.readyReplicas ?? 0) !== replicas)
      return `readyReplicas ${app.status?.readyReplicas}, spec ${replicas}; ${depState}`
    if (!dep.metadata.ownerReferences?.some((o) => o.uid === app.metadata.uid && o.controller))
      return 'Deployment not controlled by it'
    const c = dep.spec?.template?.spec?.containers?.[0]
    const port = app.spec.port ?? 8080
    if (
      dep.spec?.replicas !== replicas ||
      c?.image !== app.spec.image ||
      c?.ports?.[0]?.containerPort !== port
    )
      return `Deployment has replicas ${dep.spec?.replicas}, image ${c?.image}, port ${c?.ports?.[0]?.containerPort}`
    if (svc === undefined) return 'no Service'
    const svcPort = (svc.spec as { ports?: { port?: number }[] } | undefined)?.ports?.[0]?.port
    if (svcPort !== port) return `Service port ${svcPort}, spec ${port}`
    const degraded = app.status?.conditions?.find((c) => c.type === 'Degraded')
    if (degraded?.status !== 'False')
      return `Degraded ${degraded?.status}/${degraded?.reason}: ${degraded?.message}`
    return undefined
  }

  async #nodes(ev: Evaluation, old: (t: number) => boolean): Promise<void> {
    const { admin, workload } = this.#o
    const problem = (message: string) => ev.problems.push({ invariant: NODE_FILES, message })
    const [ncList, ...nodeObjs] = await Promise.all([
      admin.resource(NODECONFIGS).list({ labelSelector: `${RUN_LABEL}=${this.#o.run}` }),
      ...this.#o.nodes.map((n) => admin.resource(CORE_TYPES.nodes).get(n.name)),
    ])
    const labelsOf = new Map(nodeObjs.map((n) => [n.metadata.name!, n.metadata.labels ?? {}]))
    const selects = (nc: NodeConfig, node: string): boolean =>
      Object.entries(nc.spec.nodeSelector ?? {}).every(([k, v]) => labelsOf.get(node)?.[k] === v)
    const ncChanged = (name: string): number => workload.nodeConfigs.get(name)?.lastChange ?? -Infinity
    const lastRelabel = Math.max(-Infinity, ...workload.nodeChanges.values())

    for (const node of this.#o.nodes) {
      const want = new Map<string, { content: string; mode: number }>()
      for (const nc of ncList.items)
        if (selects(nc, node.name))
          for (const f of nc.spec.files ?? [])
            want.set(f.path, { content: f.content, mode: parseInt(f.mode, 8) })
      const have = await managedFiles(node.root)
      for (const path of new Set([...want.keys(), ...have])) {
        const owner = path.split('/')[0]!
        const changed = Math.max(
          ncChanged(owner),
          workload.nodeChanges.get(node.name) ?? -Infinity,
          workload.tampers.get(`${node.name}:${path}`) ?? -Infinity,
        )
        if (!old(changed)) continue
        ev.checked[NODE_FILES]++
        const w = want.get(path)
        const full = join(node.root, path)
        const actual = await Promise.all([readFile(full, 'utf8'), stat(full)]).catch(() => undefined)
        if (w === undefined) {
          if (actual !== undefined) problem(`${node.name}: ${path} should not be there`)
        } else if (actual === undefined) problem(`${node.name}: ${path} is missing`)
        else if (actual[0] !== w.content) problem(`${node.name}: ${path} has other content`)
        else if ((actual[1].mode & 0o777) !== w.mode)
          problem(
            `${node.name}: ${path} has mode ${(actual[1].mode & 0o777).toString(8)}, want ${w.mode.toString(8)}`,
          )
      }
    }

    // Each NodeConfig: a report from exactly the selected nodes, each Applied at the current
    // generation, and an aggregate that counts them.
    const reports = (await admin.resource(NODECONFIGREPORTS).list()).items
    const mine = new Set(this.#o.nodes.map((n) => n.name))
    for (const nc of ncList.items) {
      if (!old(Math.max(ncChanged(nc.metadata.name!), lastRelabel))) continue
      ev.checked[NODE_FILES]++
      const selected = this.#o.nodes.filter((n) => selects(nc, n.name)).map((n) => n.name)
      for (const message of rolloutProblems(nc, selected, mine, reports)) problem(message)
    }
  }
}
