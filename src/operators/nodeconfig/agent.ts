/**
 * @module agent — the per-node NodeConfig agent: two informers, one key, one reconciler.
 *
 * `edgeop agent --node-name=$NODE_NAME --root=/var/lib/edgeop/files` runs one of these
 * on every node, without leader election: each node is its own shard. It watches every
 * NodeConfig (they are cluster-scoped and few, and only the aggregator writes their status),
 * its own Node (field selector `metadata.name=<node>`) and its own NodeConfigReports (field
 * selector `spec.nodeName=<node>`): never all Nodes, never another node's report, never Pods.
 */
import type { InformerFactory } from '../../cache/index.ts'
import { CORE_TYPES, type KubeClient } from '../../client/index.ts'
import {
  Controller,
  type ControllerObserver,
  labelsChanged,
  type Predicate,
  type ReconcileRequest,
} from '../../controller/index.ts'
import {
  type Clock,
  EdgeopError,
  isDns1123Subdomain,
  type KubeObject,
  type Logger,
} from '../../core/index.ts'
import {
  booleanFlag,
  durationFlag,
  kubeName,
  nonEmpty,
  OPERATOR_FLAGS,
  type OperatorSpec,
  stringFlag,
  validateMetricsOptions,
} from '../../operator/index.ts'
import type { QueueMetrics } from '../../queue/index.ts'
import { NODECONFIGS, type NodeConfig } from './api.ts'
import type { EventSink } from './event-sink.ts'
import { FileStore, type NodeFiles } from './file-store.ts'
import { DEFAULT_RECHECK_INTERVAL_MS, nodeConfigReconciler } from './reconcile.ts'
import { NODE_NAME_FIELD, NODECONFIGREPORTS } from './report-api.ts'
import { cacheDirProblem, checkAgentRoot } from './root-check.ts'
import { keepOwnEntry } from './status.ts'

/** The root on a node unless `--root` says otherwise (FHS: variable state of a package). */
export const DEFAULT_AGENT_ROOT = '/var/lib/edgeop/files'
/** The controller's name (logs, metrics). */
export const AGENT_CONTROLLER_NAME = 'nodeconfig-agent'

/** Shortest `--recheck-interval`: re-reading every managed file more often than each second is all I/O. */
export const MIN_RECHECK_INTERVAL_MS = 1_000
/** Longest `--recheck-interval`: a hand edit left in place for more than a day is drift nobody watches. */
export const MAX_RECHECK_INTERVAL_MS = 86_400_000

/** Options of {@link nodeConfigAgent}. */
export interface NodeConfigAgentOptions {
  client: KubeClient
  factory: InformerFactory
  /** This node's name (`spec.nodeName` through the downward API in a DaemonSet). */
  nodeName: string
  /** Directory that holds the managed files; created if missing. */
  root: string
  /** The files under `root`; default a {@link FileStore} on it (a test gives an in-memory one). */
  files?: NodeFiles
  /** Events about NodeConfigs (an `EventRecorder`); none when omitted. */
  recorder?: EventSink
  /** Drift check interval; default `DEFAULT_RECHECK_INTERVAL_MS` (30 s). */
  recheckIntervalMs?: number
  logger?: Logger
  clock?: Clock
  /** Metrics hooks (e.g. from `Manager.controllerHooks`). */
  observer?: ControllerObserver
  queueMetrics?: QueueMetrics
}

/**
 * Spec edits, deletion and a rollout wave opening wake the agent; other status writes do not.
 */
const specOrDeletion: Predicate = {
  update: (a, b) =>
    a.metadata.generation !== b.metadata.generation ||
    JSON.stringify((a as NodeConfig).status?.rollout) !== JSON.stringify((b as NodeConfig).status?.rollout) ||
    a.metadata.uid !== b.metadata.uid ||
    (!a.metadata.deletionTimestamp && !!b.metadata.deletionTimestamp),
}

/** Keeps only what the agent reads of its Node: name, uid, labels. */
function nodeLabelsOnly(node: KubeObject): KubeObject {
  const { name, uid, resourceVersion, labels } = node.metadata
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, uid, resourceVersion, labels } }
}

/**
 * Builds the agent's controller and registers its two informers with `factory` (start
 * the factory after, then `controller.run(signal)`; no leader election). The node's key
 * is enqueued at once, so the first pass — including garbage collection of files whose
 * NodeConfigs vanished while the agent was down — runs as soon as the caches have synced.
 *
 * @example
 * const factory = new InformerFactory(client)
 * const agent = nodeConfigAgent({ client, factory, nodeName: process.env.NODE_NAME!, root: DEFAULT_AGENT_ROOT })
 * factory.start(signal)
 * await agent.run(signal)
 */
export function nodeConfigAgent(o: NodeConfigAgentOptions): Controller<KubeObject> {
  if (!isDns1123Subdomain(o.nodeName))
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `--node-name: ${JSON.stringify(o.nodeName)} is not a node name`,
      {
        step: 'configure agent',
      },
    )
  if (o.root === '')
    throw new EdgeopError('EDGEOP_ERR_INVALID', '--root: a directory is required', {
      step: 'configure agent',
    })
  const nodes = o.factory.informer(
    { type: CORE_TYPES.nodes, fieldSelector: `metadata.name=${o.nodeName}`, metadataOnly: true },
    { transform: nodeLabelsOnly },
  )
  const configs = o.factory.informer({ type: NODECONFIGS }, { transform: keepOwnEntry(o.nodeName) })
  const reports = o.factory.informer({
    type: NODECONFIGREPORTS,
    fieldSelector: `${NODE_NAME_FIELD}=${o.nodeName}`,
  })
  const key: ReconcileRequest = { namespace: undefined, name: o.nodeName }
  const controller = new Controller<KubeObject>({
    name: AGENT_CONTROLLER_NAME,
    for: { source: nodes, kind: 'Node', group: '', namespaced: false, predicates: [labelsChanged] },
    watches: [{ source: configs, map: () => [key], predicates: [specOrDeletion] }],
    maxConcurrentReconciles: 1,
    // The agent acts on a restored snapshot: it keeps serving the node's last known files while the
    // API is away. Its reconciler only writes files of NodeConfigs it sees and removes files it wrote
    // for NodeConfigs it no longer sees; a snapshot still holds those deleted while the agent was
    // down, so their files stay until the watch delivers the deletion (the safe side).
    actOnRestored: true,
    logger: o.logger,
    clock: o.clock,
    observer: o.observer,
    queueMetrics: o.queueMetrics,
    reconcile: nodeConfigReconciler({
      nodeName: o.nodeName,
      getNode: () => nodes.store.get(o.nodeName),
      listNodeConfigs: () => configs.store.list(),
      store: o.files ?? new FileStore(o.root),
      reports: o.client.resource(NODECONFIGREPORTS),
      listReports: () => reports.store.list(),
      recorder: o.recorder,
      clock: o.clock,
      recheckIntervalMs: o.recheckIntervalMs,
    }),
  })
  controller.enqueue(key)
  return controller
}

/** The node agent's flags: the operator's, without leader election (each node is its own shard) or `--namespace`. */
const {
  'leader-elect': _le,
  'leader-election-id': _id,
  'leader-election-namespace': _ns,
  'leader-election-lease-duration': _ld,
  'leader-election-renew-deadline': _rd,
  'leader-election-retry-period': _rp,
  namespace: _n,
  ...AGENT_BASE
} = OPERATOR_FLAGS

/** `edgeop agent`'s flags. */
export const AGENT_FLAGS = {
  ...AGENT_BASE,
  'node-name': stringFlag(
    "Required: this node's name (a DNS-1123 subdomain; the downward API gives spec.nodeName).",
    { schema: kubeName('subdomain', 'a node name'), placeholder: 'name' },
  ),
  root: stringFlag(
    'Directory NodeConfig files are written under (nothing outside it is touched); created if missing, writable, not a system directory (/, /var, …), nor in /bin, /boot, /dev, /etc, /lib*, /proc, /root, /sbin, /sys, /usr, a directory whose files run (kubelet, CNI, k3s/RKE2 manifests, cron, systemd) or any .ssh.',
    { default: DEFAULT_AGENT_ROOT, schema: nonEmpty(), placeholder: 'dir' },
  ),
  'allow-system-root': booleanFlag(
    "Accept a system directory as --root: anyone who can create a NodeConfig can then replace the node's own files.",
  ),
  'recheck-interval': durationFlag('How often files are re-checked for drift (hand edits, deletions).', {
    default: DEFAULT_RECHECK_INTERVAL_MS,
    min: MIN_RECHECK_INTERVAL_MS,
    max: MAX_RECHECK_INTERVAL_MS,
  }),
}

/**
 * The node agent as `operatorCommand` runs it (`edgeop agent`): no leader election, `--node-name`
 * required, `--root` checked before anything connects, events as
 * `platform.example.com/nodeconfig-agent` from the node.
 */
export const nodeConfigAgentOperator: OperatorSpec<typeof AGENT_FLAGS> = {
  name: 'edgeop agent',
  description: 'Run the NodeConfig node agent for one node (no leader election: each node is its own shard)',
  flags: AGENT_FLAGS,
  validate: (o) =>
    validateMetricsOptions(o) ??
    (o.nodeName ? undefined : '--node-name: required (set it from spec.nodeName with the downward API)'),
  precheck: async (o) => {
    const problem = await checkAgentRoot(o.root, { allowSystemRoot: o.allowSystemRoot })
    if (problem === undefined) return o.cacheDir ? await cacheDirProblem(o.root, o.cacheDir) : undefined
    return `--root: ${problem.message}${problem.kind === 'system' ? ' (--allow-system-root accepts it)' : ''}`
  },
  reportingController: 'platform.example.com/nodeconfig-agent',
  instance: (o) => o.nodeName,
  startFields: (o) => ({ node: o.nodeName, root: o.root }),
  controllers: ({ options: o, client, manager, recorder, log }) => [
    nodeConfigAgent({
      client,
      factory: manager.factory,
      nodeName: o.nodeName,
      root: o.root,
      recorder,
      recheckIntervalMs: o.recheckInterval,
      logger: log.child({ node: o.nodeName }),
    }),
  ],
}
