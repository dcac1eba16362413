/**
 * @module workload — the soak's driver: creates, edits and deletes AppServices and
 * NodeConfigs, relabels the fake Nodes and tampers with node files, at a steady, seeded
 * pace, and remembers when it last touched each thing (the checker's clock for "converged
 * within a bound after the last change").
 *
 * The driver talks to the apiserver directly (admin, not through the fault proxy), so the
 * proxy counts only the operator's and the agents' requests. Its writes fail only while
 * the apiserver restarts; a failed write still counts as a change (it may have landed),
 * and the checker takes the apiserver's objects as the truth, not the driver's memory.
 */
import { chmod, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Node } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import type { Rng } from './rng.ts'

/** Label on every NodeConfig and Node of one soak run. */
export const RUN_LABEL = 'edgeop.test/soak-run'
/** Field manager of the driver's server-side applies. */
export const FIELD_MANAGER = 'edgeop-soak'

/** Images the driver picks from (all valid references). */
const IMAGES = [
  'nginx:1.27',
  'nginx:1.28',
  'busybox:1.36',
  'registry.local:5000/team/api:v2',
  'ghcr.io/example/worker:1.0.3',
]
/** Not a valid image reference: the operator answers InvalidConfiguration. */
export const INVALID_IMAGE = 'Not A Valid Image'
const PORTS = [80, 8080, 9090]
const DB_CLASSES = ['standard', 'fast', 'archive']
const MODES = ['0644', '0600', '0755', '0640', '644']
const SELECTORS: Record<string, string>[] = [
  {},
  { role: 'edge' },
  { role: 'core' },
  { zone: 'north' },
  { zone: 'south' },
  { role: 'edge', zone: 'south' },
]

/** One fake Node of the run. */
export interface SoakNode {
  /** Agent slot, e.g. `agent-a`. */
  slot: string
  name: string
  root: string
  labels: Record<string, string>
}

/** The driver's memory of one AppService (names are never reused). */
export interface AppRecord {
  ns: string
  name: string
  /** From the create response; learned from the apiserver when the create's answer was lost. */
  uid: string | undefined
  /** ms since start of the last write attempt (create, edit, delete). */
  lastChange: number
  /** ms since start the driver's delete was accepted (or the object was seen gone). */
  deletedAt: number | undefined
  /** The spec as last written (what edits start from). */
  spec: Record<string, unknown>
  /** The generation last seen converged (for latency measurement). */
  convergedGeneration: number | undefined
  /** A create is in flight: the object may not exist yet. */
  creating: boolean
  /** ms since start the create call returned (or failed); undefined while in flight. */
  createdAt: number | undefined
  /** database.enabled was on at some point: once off, it is never turned on again, so a key is created at most once. */
  hadDatabase: boolean
}

/** The driver's memory of one NodeConfig. */
export interface NcRecord {
  name: string
  lastChange: number
  deletedAt: number | undefined
  spec: { nodeSelector: Record<string, string>; files: { path: string; content: string; mode: string }[] }
  nextFile: number
}

/** Driver operations. */
export const OPS = [
  'create-app',
  'edit-app',
  'delete-app',
  'create-nodeconfig',
  'edit-nodeconfig',
  'delete-nodeconfig',
  'relabel-node',
  'tamper-file',
] as const
export type Op = (typeof OPS)[number]

/** Options of {@link Workload}. */
export interface WorkloadOptions {
  admin: KubeClient
  namespaces: readonly string[]
  run: string
  nodes: readonly SoakNode[]
  rng: Rng
  /** Epoch ms of the soak start. */
  start: number
  /** Live AppServices the driver aims for. */
  appTarget: number
  /** Live NodeConfigs the driver aims for. */
  nodeConfigTarget: number
  /** Driver operations per second. */
  rate: number
}

/** The driver. */
export class Workload {
  readonly apps = new Map<string, AppRecord>()
  readonly nodeConfigs = new Map<string, NcRecord>()
  /** Node name → ms since start of its last relabel. */
  readonly nodeChanges = new Map<string, number>()
  /** `<node>:<path>` → ms since start of the last tamper. */
  readonly tampers = new Map<string, number>()
  readonly stats = Object.fromEntries(OPS.map((op) => [op, { ok: 0, failed: 0 }])) as Record<
    Op,
    { ok: number; failed: number }
  >
  readonly errors: string[] = []
  readonly #o: WorkloadOptions
  #appSeq = 0
  #ncSeq = 0

  constructor(options: WorkloadOptions) {
    this.#o = options
  }

  get #now(): number {
    return Date.now() - this.#o.start
  }

  liveApps(): AppRecord[] {
    return [...this.apps.values()].filter((a) => a.deletedAt === undefined)
  }

  liveNodeConfigs(): NcRecord[] {
    return [...this.nodeConfigs.values()].filter((n) => n.deletedAt === undefined)
  }

  /** The record that owns `uid`, if any. */
  appByUid(uid: string): AppRecord | undefined {
    for (const a of this.apps.values()) if (a.uid === uid) return a
    return undefined
  }

  #apps(ns: string) {
    return this.#o.admin.resource(APPSERVICES, ns)
  }

  #ncs() {
    return this.#o.admin.resource(NODECONFIGS)
  }

  /** Creates the initial population (70 % of each target) as fast as the apiserver takes it. */
  async populate(): Promise<void> {
    while (this.liveApps().length < Math.ceil(this.#o.appTarget * 0.7)) await this.#do('create-app')
    while (this.liveNodeConfigs().length < Math.ceil(this.#o.nodeConfigTarget * 0.7))
      await this.#do('create-nodeconfig')
  }

  /** Runs operations at the configured rate until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const period = 1000 / this.#o.rate
    let next = Date.now()
    while (!signal.aborted) {
      await this.#do(this.#choose())
      next += period * this.#o.rng.between(0.5, 1.5)
      const wait = next - Date.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      else next = Date.now()
    }
  }

  #choose(): Op {
    const apps = this.liveApps().length
    const ncs = this.liveNodeConfigs().length
    const at = this.#o.appTarget
    const nt = this.#o.nodeConfigTarget
    return this.#o.rng.weighted<Op>({
      'create-app': apps < at * 0.8 ? 3 : apps < at * 1.2 ? 1.5 : 0.3,
      'edit-app': apps > 0 ? 3 : 0,
      'delete-app': apps > at * 1.2 ? 3 : apps > at * 0.8 ? 1.5 : apps > 0 ? 0.4 : 0,
      'create-nodeconfig': ncs < nt * 0.8 ? 1.2 : ncs < nt * 1.2 ? 0.6 : 0.1,
      'edit-nodeconfig': ncs > 0 ? 1.2 : 0,
      'delete-nodeconfig': ncs > nt * 1.2 ? 1.2 : ncs > nt * 0.8 ? 0.6 : ncs > 0 ? 0.2 : 0,
      'relabel-node': 0.15,
      'tamper-file': 0.25,
    })
  }

  async #do(op: Op): Promise<void> {
    try {
      const done = await this.#op(op)
      if (done) this.stats[op].ok++
    } catch (err) {
      this.stats[op].failed++
      if (this.errors.length < 50)
        this.errors.push(`[+${(this.#now / 1000).toFixed(1)} s] ${op}: ${(err as Error).message}`)
    }
  }

  /** One operation; false when there was nothing to do it to. */
  async #op(op: Op): Promise<boolean> {
    const rng = this.#o.rng
    switch (op) {
      case 'create-app': {
        const ns = rng.pick(this.#o.namespaces)
        const name = `app-${++this.#appSeq}`
        const spec = this.#appSpec()
        const record: AppRecord = {
          ns,
          name,
          uid: undefined,
          lastChange: this.#now,
          deletedAt: undefined,
          spec,
          convergedGeneration: undefined,
          creating: true,
          createdAt: undefined,
          hadDatabase: (spec.database as { enabled?: boolean } | undefined)?.enabled === true,
        }
        this.apps.set(`${ns}/${name}`, record)
        try {
          const created = await this.#apps(ns).create({
            apiVersion: 'platform.example.com/v1alpha1',
            kind: 'AppService',
            metadata: { name },
            spec,
          } as unknown as AppService)
          record.uid = created.metadata.uid
        } finally {
          record.creating = false
          record.lastChange = this.#now
          record.createdAt = this.#now
        }
        return true
      }
      case 'edit-app': {
        const live = this.liveApps()
        if (live.length === 0) return false
        const app = rng.pick(live)
        const patch = this.#appEdit(app)
        app.lastChange = this.#now
        app.spec = mergeSpec(app.spec, patch)
        await this.#apps(app.ns).patch(app.name, { spec: patch }, 'merge')
        app.lastChange = this.#now
        return true
      }
      case 'delete-app': {
        const live = this.liveApps()
        if (live.length === 0) return false
        const app = rng.pick(live)
        app.lastChange = this.#now
        try {
          await this.#apps(app.ns).delete(app.name)
        } catch (err) {
          if ((err as { status?: number }).status !== 404) throw err
        }
        app.deletedAt = this.#now
        return true
      }
      case 'create-nodeconfig': {
        const name = `nc-${this.#o.run}-${++this.#ncSeq}`
        const record: NcRecord = {
          name,
          lastChange: this.#now,
          deletedAt: undefined,
          spec: { nodeSelector: { ...rng.pick(SELECTORS) }, files: [] },
          nextFile: 0,
        }
        const files = rng.int(1, 4)
        for (let i = 0; i < files; i++) record.spec.files.push(this.#newFile(record))
        this.nodeConfigs.set(name, record)
        await this.#applyNc(record)
        return true
      }
      case 'edit-nodeconfig': {
        const live = this.liveNodeConfigs()
        if (live.length === 0) return false
        const nc = rng.pick(live)
        const files = nc.spec.files
        const edit = rng.weighted({
          content: 3,
          mode: 1.5,
          add: files.length < 6 ? 1.5 : 0,
          remove: files.length > 0 ? 1 : 0,
          selector: 1,
        })
        if (edit === 'add' || files.length === 0) files.push(this.#newFile(nc))
        else if (edit === 'remove') files.splice(rng.int(0, files.length - 1), 1)
        else if (edit === 'content') rng.pick(files).content = this.#content()
        else if (edit === 'mode') rng.pick(files).mode = rng.pick(MODES)
        else nc.spec.nodeSelector = { ...rng.pick(SELECTORS) }
        nc.lastChange = this.#now
        await this.#applyNc(nc)
        nc.lastChange = this.#now
        return true
      }
      case 'delete-nodeconfig': {
        const live = this.liveNodeConfigs()
        if (live.length === 0) return false
        const nc = rng.pick(live)
        nc.lastChange = this.#now
        try {
          await this.#ncs().delete(nc.name)
        } catch (err) {
          if ((err as { status?: number }).status !== 404) throw err
        }
        nc.deletedAt = this.#now
        nc.lastChange = this.#now
        return true
      }
      case 'relabel-node': {
        const node = rng.pick(this.#o.nodes)
        const key = rng.pick(['role', 'zone'])
        const value =
          key === 'role'
            ? node.labels.role === 'edge'
              ? 'core'
              : 'edge'
            : node.labels.zone === 'north'
              ? 'south'
              : 'north'
        this.nodeChanges.set(node.name, this.#now)
        node.labels[key] = value
        await this.#o.admin
          .resource(CORE_TYPES.nodes)
          .patch(node.name, { metadata: { labels: { [key]: value } } }, 'merge')
        this.nodeChanges.set(node.name, this.#now)
        return true
      }
      case 'tamper-file': {
        const node = rng.pick(this.#o.nodes)
        const files = await managedFiles(node.root)
        if (files.length === 0) return false
        const path = rng.pick(files)
        const full = join(node.root, path)
        this.tampers.set(`${node.name}:${path}`, this.#now)
        const how = rng.pick(['content', 'mode', 'delete'])
        if (how === 'content') await writeFile(full, 'tampered by the soak\n')
        else if (how === 'mode')
          await chmod(full, ((await stat(full)).mode & 0o777) === 0o600 ? 0o640 : 0o600)
        else await rm(full, { force: true })
        this.tampers.set(`${node.name}:${path}`, this.#now)
        return true
      }
    }
  }

  #appSpec(): Record<string, unknown> {
    const rng = this.#o.rng
    const spec: Record<string, unknown> = {
      image: rng.pick(IMAGES),
      replicas: rng.int(0, 2),
      port: rng.pick(PORTS),
    }
    if (rng.chance(0.45)) spec.database = { enabled: true, class: rng.pick(DB_CLASSES) }
    return spec
  }

  /** A merge patch for `spec`: one field changed (an invalid image now and then, fixed by the next edit). */
  #appEdit(app: AppRecord): Record<string, unknown> {
    const rng = this.#o.rng
    if (app.spec.image === INVALID_IMAGE) return { image: rng.pick(IMAGES) }
    const db = (app.spec.database as { enabled?: boolean } | undefined)?.enabled === true
    const field = rng.weighted({
      image: 3,
      replicas: 3,
      // The CRD fixes port and class while the database is enabled.
      port: db ? 0 : 1,
      database: app.hadDatabase && !db ? 0 : 2.5,
      invalid: 0.3,
    })
    switch (field) {
      case 'image':
        return { image: rng.pick(IMAGES.filter((i) => i !== app.spec.image)) }
      case 'replicas':
        return { replicas: (((app.spec.replicas as number) ?? 1) + rng.int(1, 2)) % 3 }
      case 'port':
        return { port: rng.pick(PORTS.filter((p) => p !== app.spec.port)) }
      case 'database':
        // A database goes off at most once and never comes back on: every key is created at most
        // once, so any second creation the stand-in records is a bug.
        if (db) return { database: rng.chance(0.5) ? null : { enabled: false } }
        app.hadDatabase = true
        return { database: { enabled: true, class: rng.pick(DB_CLASSES) } }
      default:
        return { image: INVALID_IMAGE }
    }
  }

  #newFile(nc: NcRecord): { path: string; content: string; mode: string } {
    const i = nc.nextFile++
    const dir = this.#o.rng.pick(['', 'etc/', 'bin/', 'conf.d/'])
    return { path: `${nc.name}/${dir}f${i}.conf`, content: this.#content(), mode: this.#o.rng.pick(MODES) }
  }

  /** Seeded text, 1 line to ~2 KiB. */
  #content(): string {
    const rng = this.#o.rng
    const lines = rng.int(1, 60)
    let out = ''
    for (let i = 0; i < lines; i++) out += `key_${i} = ${rng.int(0, 1_000_000).toString(36)}\n`
    return out
  }

  async #applyNc(nc: NcRecord): Promise<void> {
    await this.#ncs().apply(
      {
        apiVersion: 'platform.example.com/v1alpha1',
        kind: 'NodeConfig',
        metadata: { name: nc.name, labels: { [RUN_LABEL]: this.#o.run } },
        spec: {
          nodeSelector: { [RUN_LABEL]: this.#o.run, ...nc.spec.nodeSelector },
          files: nc.spec.files.map((f) => ({ ...f })),
        },
      } as unknown as NodeConfig,
      { fieldManager: FIELD_MANAGER, force: true },
    )
  }
}

/** JSON merge patch (RFC 7386) of a spec, for the driver's own memory. */
function mergeSpec(spec: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...spec }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else if (typeof v === 'object' && !Array.isArray(v) && typeof out[k] === 'object' && out[k] !== null)
      out[k] = mergeSpec(out[k] as Record<string, unknown>, v as Record<string, unknown>)
    else out[k] = v
  }
  return out
}

/** Relative paths of the files under `root` the agent manages (not its `.edgeop` bookkeeping or temp files). */
export async function managedFiles(root: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      return // removed while walking
    }
    for (const e of entries) {
      if (e.name.startsWith('.edgeop')) continue
      if (e.isDirectory()) await walk(join(dir, e.name), `${prefix}${e.name}/`)
      else out.push(`${prefix}${e.name}`)
    }
  }
  await walk(root, '')
  return out.sort()
}

/** Node object for a soak node. */
export function nodeObject(node: SoakNode): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: node.name, labels: { ...node.labels } } }
}
