/**
 * @module nodeconfig-simulation — the NodeConfig operator under the simulator: one agent per node (each
 * with its disk in memory, which outlives its crashes), two leader-elected aggregators, a workload that
 * creates, changes and deletes NodeConfigs, and the operator's invariants.
 */
import { InformerFactory } from '../../src/cache/index.ts'
import { type Clock, noopLogger, sleep } from '../../src/core/index.ts'
import { LeaderElector, LeaseLock, runWhileLeading } from '../../src/leader/index.ts'
import {
  GROUP,
  KIND,
  NODECONFIGREPORTS,
  NODECONFIGS,
  type NodeConfig,
  type NodeConfigReport,
  NodeConfigReportSpec,
  NodeConfigSpec,
  type NodeFiles,
  nodeConfigAgent,
  nodeConfigAggregator,
  reportOwnerUid,
  rolloutBucket,
  STATE,
  selects,
  VERSION,
} from '../../src/operators/nodeconfig/index.ts'
import type {
  Invariant,
  ProcessContext,
  SimulatedCluster,
  SimulatedProcess,
  SimulationOptions,
  WriteInvariant,
} from '../../src/testing/index.ts'
import { leaseHolder } from './lease-holder.ts'
import { type DiskFaults, MemoryNodeFiles } from './memory-node-files.ts'

const LEASE_NAMESPACE = 'ops'
const LEASE = 'edgeop-nodeconfig-aggregator'
/** NodeConfig names the workload uses: deletes race reconciles and names come back with new UIDs. */
const NAMES = ['motd', 'sysctl', 'limits']
/** Waves the workload picks from (`spec.rollout.maxUnavailable`, percent of the buckets). */
const MAX_UNAVAILABLE = [10, 25, 50, 100]
const NODE_TYPE = { group: '', version: 'v1', resource: 'nodes', namespaced: false }
const AGENT_PREFIX = 'agent-'
/** Nodes in a run: both roles, waves of one and of several nodes, under a second of CPU per 10 virtual minutes. */
export const DEFAULT_NODES = 5
const AGGREGATOR_PREFIX = 'aggregator-'

const nodeName = (i: number) => `node-${i}`
/** How a hand-edited file starts: the file invariant accepts it until the agent's drift check replaces it. */
const HAND_EDIT = '# edited by hand'
/** Half the nodes are `role=edge`, so a NodeConfig selecting them leaves the others alone. */
const nodeLabels = (i: number) => ({ role: i % 2 === 0 ? 'edge' : 'core' })

/** `uid@generation` → the files of that generation and the widest wave the aggregator opened it to. */
interface Generation {
  uid: string
  files: Map<string, { content: string; mode: number }>
  percent: number
  /** When (clock.now()) the aggregator first opened it; undefined while closed. */
  openedAt: number | undefined
}

/** What one run keeps outside the store: the nodes' disks and the history of every NodeConfig generation. */
export class NodeConfigWorld {
  readonly disks = new Map<string, MemoryNodeFiles>()
  readonly generations = new Map<string, Generation>()
  /** The generations that write each path. */
  readonly byPath = new Map<string, Generation[]>()
  readonly nodes: number
  /** Node → when (clock.now()) its labels last changed. */
  readonly relabelled = new Map<string, number>()
  /** Disk faults injected in the run, by kind. */
  readonly diskFaults = new Map<string, number>()
  /** Virtual time (clock.now()) when disk faults stop: the simulation's fault end. */
  diskFaultsUntil = 0

  constructor(nodes: number) {
    this.nodes = nodes
    this.reset()
  }

  /** Fresh disks and history (each run, including the re-runs that minimize a failure). */
  reset(): void {
    this.disks.clear()
    this.generations.clear()
    this.byPath.clear()
    this.diskFaults.clear()
    this.relabelled.clear()
    for (let i = 0; i < this.nodes; i++) this.disks.set(nodeName(i), new MemoryNodeFiles())
  }

  readonly #buckets = new Map<string, number>()

  /** {@link rolloutBucket}, remembered: the invariants ask for it at every step. */
  bucket(uid: string, node: string): number {
    const key = `${uid}/${node}`
    const known = this.#buckets.get(key)
    if (known !== undefined) return known
    const b = rolloutBucket(uid, node)
    this.#buckets.set(key, b)
    return b
  }

  /** Records `config` as the store holds it now: its generation's files and how far that generation is open. */
  observe(config: NodeConfig, now: number): void {
    const key = `${config.metadata.uid}@${config.metadata.generation}`
    let g = this.generations.get(key)
    if (!g) {
      const files = new Map(
        (config.spec?.files ?? []).map((f) => [
          f.path,
          { content: f.content, mode: Number.parseInt(f.mode ?? '0644', 8) },
        ]),
      )
      g = { uid: config.metadata.uid!, files, percent: 0, openedAt: undefined }
      this.generations.set(key, g)
      for (const path of files.keys()) {
        const list = this.byPath.get(path) ?? []
        list.push(g)
        this.byPath.set(path, list)
      }
    }
    const r = config.status?.rollout
    if (r && r.generation === config.metadata.generation) {
      g.percent = Math.max(g.percent, r.percent)
      g.openedAt ??= now
    }
  }
}

/** The agent of `node`: fresh informers each incarnation, the node's disk kept (`files`: another view of it). */
export function agentProcess(world: NodeConfigWorld, node: string, files?: NodeFiles): SimulatedProcess {
  return {
    name: AGENT_PREFIX + node,
    async run(ctx: ProcessContext) {
      const { client, clock, random } = ctx
      // Power lost between two file operations ends this incarnation as a crash fault would.
      const power = new AbortController()
      const signal = AbortSignal.any([ctx.signal, power.signal])
      const faults: DiskFaults = {
        on: () => clock.now() < world.diskFaultsUntil,
        crash: () => power.abort(),
        count: (kind) => {
          world.diskFaults.set(kind, (world.diskFaults.get(kind) ?? 0) + 1)
          ctx.trace(`disk fault: ${kind}`)
        },
      }
      const factory = new InformerFactory(client, { clock, logger: noopLogger })
      const agent = nodeConfigAgent({
        client,
        factory,
        nodeName: node,
        root: '/sim',
        files: files ?? world.disks.get(node)!.view(signal, clock, random, faults),
        clock,
        logger: noopLogger,
      })
      factory.start(signal)
      await agent.run(signal)
      if (power.signal.aborted && !ctx.signal.aborted)
        throw new Error(`${node}: power lost right after a file write`)
    },
  }
}

/** One aggregator replica: it aggregates only while it holds the Lease, with fresh caches each time it leads. */
export function aggregatorProcess(name: string): SimulatedProcess {
  return {
    name: AGGREGATOR_PREFIX + name,
    async run({ client, clock, signal, name: identity }: ProcessContext) {
      const lock = LeaseLock.fromClient(client, { namespace: LEASE_NAMESPACE, name: LEASE, identity })
      const elector = new LeaderElector({ lock, clock, logger: noopLogger })
      await runWhileLeading(
        elector,
        async (leading) => {
          const factory = new InformerFactory(client, { clock, logger: noopLogger })
          const aggregator = nodeConfigAggregator({ client, factory, clock, logger: noopLogger })
          factory.start(leading)
          await aggregator.run(leading)
        },
        signal,
      )
    },
  }
}

function nodeConfig(name: string, random: ProcessContext['random'], clock: Clock): NodeConfig {
  const files = Array.from({ length: 1 + random.int(3) }, (_, i) => ({
    path: `${name}/part-${i}.conf`,
    content: `${name} ${i} written at ${clock.now()}\n`,
    mode: random.pick(['0644', '0600']),
  }))
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: { name },
    spec: {
      files,
      rollout: { maxUnavailable: random.pick(MAX_UNAVAILABLE), maxFailures: 0 },
      ...(random.int(3) === 0 ? { nodeSelector: { role: 'edge' } } : {}),
    },
  } as NodeConfig
}

/**
 * A user for `activeMs`: every few virtual seconds one of create, change the files (a new generation),
 * change the wave or the selector, delete, relabel a node (in or out of a selector, no new generation),
 * or edit or delete a managed file on a node by hand.
 */
export function nodeConfigWorkload(activeMs: number, world: NodeConfigWorld): SimulationOptions['workload'] {
  const nodes = world.nodes
  return async ({ client, clock, random, trace }) => {
    const configs = client.resource(NODECONFIGS)
    const nodeApi = client.resource(NODE_TYPE)
    const end = clock.now() + activeMs
    while (clock.now() < end) {
      await sleep(1_000 + random.int(15_000), clock)
      const name = random.pick(NAMES)
      const op = random.int(6)
      try {
        if (op === 5) {
          // Someone on the node edits or deletes a managed file: the agent's drift check puts it back.
          const node = nodeName(random.int(nodes))
          const disk = world.disks.get(node)!
          const path = [...disk.files.keys()].sort()[0]
          if (path === undefined) continue
          if (random.chance(0.5)) disk.files.delete(path)
          else disk.files.set(path, { content: `${HAND_EDIT} at ${clock.now()}\n`, mode: 0o644 })
          trace(`hand edit ${node}:${path}`)
        } else if (op === 4) {
          const node = nodeName(random.int(nodes))
          const role = random.pick(['edge', 'core'])
          await nodeApi.patch(node, { metadata: { labels: { role } } })
          trace(`relabel ${node} role=${role}`)
        } else if (op === 0) {
          await configs.create(nodeConfig(name, random, clock))
          trace(`create ${name}`)
        } else if (op === 1 || op === 2) {
          const next = nodeConfig(name, random, clock)
          await configs.patch(name, {
            spec: op === 1 ? { files: next.spec.files } : { rollout: next.spec.rollout, nodeSelector: null },
          })
          trace(`${op === 1 ? 'files' : 'wave'} ${name}`)
        } else {
          await configs.delete(name)
          trace(`delete ${name}`)
        }
      } catch {
        // The user's request failed (the object exists, is gone or is being deleted): next one.
      }
    }
  }
}

const nodesOf = (c: SimulatedCluster) => c.list(NODE_TYPE)
const selectedNodes = (c: SimulatedCluster, config: NodeConfig) =>
  nodesOf(c)
    .filter((n) => selects(config.spec?.nodeSelector, n.metadata.labels))
    .map((n) => n.metadata.name!)

/** Checked after every step. */
export function nodeConfigSafety(world: NodeConfigWorld): Invariant[] {
  return [
    {
      // Nothing a node holds comes from a generation the aggregator has not opened to its bucket.
      name: 'every file on a node is of a generation opened to it',
      check() {
        for (const [node, disk] of world.disks)
          for (const [path, file] of disk.files) {
            if (file.content.startsWith(HAND_EDIT)) continue
            const from = world.byPath.get(path)?.some((g) => {
              const f = g.files.get(path)
              return (
                f?.content === file.content && f.mode === file.mode && world.bucket(g.uid, node) < g.percent
              )
            })
            if (!from) return `${node}: ${path} holds content of no generation opened to this node`
          }
        return undefined
      },
    },
    {
      // Ownership is recorded before a file is written, so no crash leaves a file nobody removes.
      name: 'every file on a node is in its ownership record',
      check() {
        for (const [node, disk] of world.disks)
          for (const path of disk.files.keys())
            if (!disk.recorded.has(path)) return `${node}: ${path} is on disk but not in the ownership record`
        return undefined
      },
    },
    {
      // A wave opens only when every node of the waves before it has reported: what is in flight
      // spans at most maxUnavailable of the buckets. A node selected by a relabel after the generation
      // opened joins the rollout where it stands (no new generation), so it is not counted (seed 408).
      name: 'a wave never exceeds maxUnavailable',
      check(c) {
        const reports = c.list<NodeConfigReport>(NODECONFIGREPORTS)
        for (const config of c.list<NodeConfig>(NODECONFIGS)) {
          const r = config.status?.rollout
          const generation = config.metadata.generation
          if (!r || r.generation !== generation) continue
          const uid = config.metadata.uid!
          const openedAt = world.generations.get(`${uid}@${generation}`)?.openedAt ?? Number.POSITIVE_INFINITY
          const max = config.spec.rollout?.maxUnavailable ?? 10
          // Only a node that holds an older generation is taken down by a new one; a node without any
          // report of this NodeConfig has none of its files (never selected, or its report went when
          // it left the selector) and takes the generation as a DaemonSet's newly matching node does.
          const older = new Set(
            reports
              .filter((x) => reportOwnerUid(x) === uid && x.spec.observedGeneration !== generation)
              .map((x) => x.spec.nodeName),
          )
          for (const node of selectedNodes(c, config)) {
            const bucket = world.bucket(uid, node)
            const joined = (world.relabelled.get(node) ?? Number.NEGATIVE_INFINITY) >= openedAt
            if (bucket < r.percent - max && older.has(node) && !joined)
              return `${config.metadata.name} generation ${generation} is open to ${r.percent}% with ${node} (bucket ${bucket}) still pending, over maxUnavailable ${max}`
          }
        }
        return undefined
      },
    },
  ]
}

/** Checked at every write: who may write what. Also records the NodeConfig history the file invariant reads. */
export function nodeConfigWriteSafety(world: NodeConfigWorld): WriteInvariant[] {
  return [
    {
      name: '(records each NodeConfig generation and its wave)',
      check(w, c) {
        if (w.target.resource === NODECONFIGS.resource && w.target.name) {
          const config = c.store.get(`${GROUP}/${NODECONFIGS.resource}`, undefined, w.target.name)
          if (config) world.observe(config as NodeConfig, c.clock.now())
        }
        if (w.target.resource === NODE_TYPE.resource && w.target.name)
          world.relabelled.set(w.target.name, c.clock.now())
        return undefined
      },
    },
    {
      name: "an agent writes only its own node's reports, and no NodeConfig",
      check(w, c) {
        if (!w.process.startsWith(AGENT_PREFIX)) return undefined
        const node = w.process.slice(AGENT_PREFIX.length)
        if (w.target.resource === NODECONFIGS.resource)
          return `${w.process} wrote NodeConfig ${w.target.name}${w.target.subresource ? '/status' : ''}`
        if (w.target.resource !== NODECONFIGREPORTS.resource) return undefined
        const report = c.store.get(
          `${GROUP}/${NODECONFIGREPORTS.resource}`,
          undefined,
          w.target.name ?? '',
        ) as NodeConfigReport | undefined
        const whose = report ? report.spec.nodeName : w.target.name?.slice(w.target.name.indexOf('.') + 1)
        return whose === node ? undefined : `${w.process} wrote report ${w.target.name} of ${whose}`
      },
    },
    {
      name: 'only the Lease holder writes NodeConfig status, and no aggregator writes a report',
      check(w, c) {
        if (!w.process.startsWith(AGGREGATOR_PREFIX)) return undefined
        if (w.target.resource === NODECONFIGREPORTS.resource)
          return `${w.process} wrote report ${w.target.name}`
        if (w.target.resource !== NODECONFIGS.resource) return undefined
        const holder = leaseHolder(c, LEASE_NAMESPACE, LEASE)
        return holder === w.process
          ? undefined
          : `${w.process} wrote NodeConfig ${w.target.name} while the Lease names ${holder || 'no one'}`
      },
    },
  ]
}

/** Checked at the end, after the faults stopped for the settle time. */
export function nodeConfigLiveness(world: NodeConfigWorld): Invariant[] {
  return [
    {
      name: 'every node holds exactly the files of the NodeConfigs selecting it',
      check(c) {
        const configs = c.list<NodeConfig>(NODECONFIGS)
        for (const [node, disk] of world.disks) {
          const labels = nodesOf(c).find((n) => n.metadata.name === node)?.metadata.labels
          const want = new Map<string, string>()
          for (const config of configs)
            if (selects(config.spec?.nodeSelector, labels))
              for (const f of config.spec.files ?? []) want.set(f.path, f.content)
          for (const [path, content] of want)
            if (disk.files.get(path)?.content !== content) return `${node}: ${path} is not as specified`
          for (const path of disk.files.keys())
            if (!want.has(path)) return `${node}: ${path} is left over from a NodeConfig gone or changed`
        }
        return undefined
      },
    },
    {
      name: 'every NodeConfig rolled out: each selected node Applied, the aggregate says so',
      check(c) {
        const reports = c.list<NodeConfigReport>(NODECONFIGREPORTS)
        for (const config of c.list<NodeConfig>(NODECONFIGS)) {
          const name = config.metadata.name
          const generation = config.metadata.generation
          const selected = selectedNodes(c, config)
          for (const node of selected) {
            const r = reports.find(
              (x) => reportOwnerUid(x) === config.metadata.uid && x.spec.nodeName === node,
            )
            if (!r || r.spec.observedGeneration !== generation || r.spec.state !== STATE.applied)
              return `${name}: ${node} reports ${r ? `${r.spec.state} at ${r.spec.observedGeneration}` : 'nothing'}, not Applied at ${generation}`
          }
          const s = config.status
          if (
            !s ||
            s.observedGeneration !== generation ||
            s.desired !== selected.length ||
            s.applied !== selected.length ||
            s.failed !== 0 ||
            s.rollout?.generation !== generation ||
            s.rollout?.percent !== 100
          )
            return `${name}: status ${JSON.stringify({ ...s, conditions: undefined })} does not say generation ${generation} applied on ${selected.length} nodes`
        }
        return undefined
      },
    },
  ]
}

/** The whole NodeConfig simulation for one seed: `minutes` of virtual time on `nodes` nodes, faults until the last 2 minutes. */
export function nodeConfigSimulation(
  seed: number,
  minutes = 10,
  world = new NodeConfigWorld(DEFAULT_NODES),
): SimulationOptions {
  const durationMs = minutes * 60_000
  const settleMs = 120_000
  const nodes = world.nodes
  return {
    seed,
    durationMs,
    settleMs,
    resources: [
      { type: NODECONFIGS, spec: NodeConfigSpec },
      {
        type: NODECONFIGREPORTS,
        spec: NodeConfigReportSpec,
        selectableFields: ['spec.nodeName', 'spec.nodeConfig'],
      },
    ],
    setup: (c) => {
      world.reset()
      world.diskFaultsUntil = c.clock.now() + durationMs - settleMs
      for (let i = 0; i < nodes; i++)
        c.store.create(
          `/${NODE_TYPE.resource}`,
          undefined,
          { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName(i), labels: nodeLabels(i) } },
          { manager: 'kubelet', now: c.clock.now() },
        )
    },
    processes: [
      ...[...world.disks.keys()].map((node) => agentProcess(world, node)),
      aggregatorProcess('a'),
      aggregatorProcess('b'),
    ],
    workload: nodeConfigWorkload(durationMs - settleMs, world),
    safety: nodeConfigSafety(world),
    writeSafety: nodeConfigWriteSafety(world),
    liveness: nodeConfigLiveness(world),
  }
}
