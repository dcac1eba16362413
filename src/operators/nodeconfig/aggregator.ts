/**
 * @module aggregator — the leader-elected NodeConfig aggregator: reports in, one status per NodeConfig out.
 *
 * `edgeop agent-aggregator --leader-elect --leader-election-id=edgeop-nodeconfig-aggregator`
 * runs one active replica per cluster. It watches NodeConfigs, every NodeConfigReport and the
 * metadata of every Node, and writes each NodeConfig's aggregate status (desired, applied,
 * failed, the open rollout wave, a `Progressing` condition), and removes the first design's
 * shared `status.nodes[]` once every node in it has its own report. Agents never write a
 * NodeConfig's status, and the aggregator never writes a report.
 */
import type { InformerFactory } from '../../cache/index.ts'
import { CORE_TYPES, isNotFound, type KubeClient } from '../../client/index.ts'
import { Controller, type ReconcileRequest } from '../../controller/index.ts'
import { type Clock, type KubeObject, type Logger, realClock } from '../../core/index.ts'
import { OPERATOR_FLAGS, type OperatorSpec, validateOperatorOptions } from '../../operator/index.ts'
import { aggregate } from './aggregate.ts'
import { NODECONFIGS, type NodeConfig } from './api.ts'
import { selects } from './plan.ts'
import { NODECONFIGREPORTS, reportOwnerUid } from './report-api.ts'
import { statusWrite } from './status-write.ts'

/** The controller's name (logs, metrics). */
export const AGGREGATOR_CONTROLLER_NAME = 'nodeconfig-aggregator'
/**
 * Shortest time between two count-only status writes of one NodeConfig: 1 s, so a burst of
 * reports is one write. Writes the agents need (a wave opening, a new generation) or alerts key
 * on (the condition's status or reason) are not held by it; which writes are made at all is
 * {@link statusWrite}'s rule, which bounds them per rollout.
 */
export const MIN_STATUS_WRITE_INTERVAL_MS = 1_000

/** Options of {@link nodeConfigAggregator}. */
export interface NodeConfigAggregatorOptions {
  client: KubeClient
  factory: InformerFactory
  logger?: Logger
  clock?: Clock
}

/** Keeps only what the aggregator reads of a Node: name and labels. */
function nodeLabelsOnly(node: KubeObject): KubeObject {
  const { name, uid, resourceVersion, labels, deletionTimestamp } = node.metadata
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, uid, resourceVersion, labels, deletionTimestamp },
  }
}

/**
 * Builds the aggregator's controller (one key per NodeConfig) and registers its informers
 * with `factory`. Run it under leader election: two aggregators would both write.
 *
 * Guarantees: a NodeConfig's status is written only when the aggregate changed: at once when
 * the generation, the wave or the condition's status or reason changed or the open waves settled,
 * else only when the counts moved by `COUNT_WRITE_STEP_PERCENT` of the fleet and at most
 * once per {@link MIN_STATUS_WRITE_INTERVAL_MS}; so one rollout costs at most
 * `maxStatusWritesPerRollout` writes. A report counts only for the NodeConfig whose UID
 * owns it and only at the current generation.
 */
export function nodeConfigAggregator(o: NodeConfigAggregatorOptions): Controller<NodeConfig> {
  const clock = o.clock ?? realClock
  const configs = o.factory.informer({ type: NODECONFIGS })
  const reports = o.factory.informer({ type: NODECONFIGREPORTS })
  const nodes = o.factory.informer(
    { type: CORE_TYPES.nodes, metadataOnly: true },
    { transform: nodeLabelsOnly },
  )
  const api = o.client.resource(NODECONFIGS)
  const lastWrite = new Map<string, number>()
  const everyConfig = (): ReconcileRequest[] =>
    configs.store.list().map((c) => ({ namespace: undefined, name: c.metadata.name! }))
  return new Controller<NodeConfig>({
    name: AGGREGATOR_CONTROLLER_NAME,
    for: { source: configs, kind: 'NodeConfig', group: NODECONFIGS.group, namespaced: false },
    watches: [
      {
        source: reports,
        map: (r) => {
          const name = (r as { spec?: { nodeConfig?: string } }).spec?.nodeConfig
          return name ? [{ namespace: undefined, name }] : []
        },
      },
      { source: nodes, map: everyConfig },
    ],
    maxConcurrentReconciles: 1,
    logger: o.logger,
    clock: o.clock,
    reconcile: async (request, ctx) => {
      const config = configs.store.get(request.name)
      if (!config || config.metadata.deletionTimestamp) {
        lastWrite.delete(request.name)
        return undefined
      }
      const selected = nodes.store
        .list()
        .filter((n) => !n.metadata.deletionTimestamp && selects(config.spec?.nodeSelector, n.metadata.labels))
        .map((n) => n.metadata.name!)
      const own = reports.store.list().filter((r) => reportOwnerUid(r) === config.metadata.uid)
      const { status, dropSharedList, waiting } = aggregate(config, selected, own, new Date(clock.now()))
      const { nodes: shared, ...current } = config.status ?? {}
      const write = statusWrite(current, status, waiting === 0, dropSharedList && !!shared)
      if (write === 'none' || write === 'hold') return undefined
      const since = clock.monotonic() - (lastWrite.get(request.name) ?? Number.NEGATIVE_INFINITY)
      if (write === 'counts' && since < MIN_STATUS_WRITE_INTERVAL_MS)
        return { requeueAfterMs: MIN_STATUS_WRITE_INTERVAL_MS - since }
      try {
        await api.patch(
          request.name,
          {
            metadata: { uid: config.metadata.uid, resourceVersion: config.metadata.resourceVersion },
            status: { ...status, ...(dropSharedList ? { nodes: null } : {}) },
          },
          'merge',
          { subresource: 'status', signal: ctx.signal },
        )
      } catch (err) {
        if (isNotFound(err)) return undefined
        throw err
      }
      lastWrite.set(request.name, clock.monotonic())
      ctx.log.info('status', {
        nodeConfig: request.name,
        generation: status.observedGeneration,
        desired: status.desired,
        applied: status.applied,
        failed: status.failed,
        wave: status.rollout?.percent,
      })
      return undefined
    },
  })
}

/** `edgeop agent-aggregator`'s flags: the operator's, without `--namespace` (NodeConfigs are cluster-scoped). */
const { namespace: _n, ...AGGREGATOR_FLAGS } = OPERATOR_FLAGS

/**
 * The aggregator as `operatorCommand` runs it (`edgeop agent-aggregator`): leader-elected
 * like the operator (`--leader-elect --leader-election-id=…`), one controller.
 */
export const nodeConfigAggregatorOperator: OperatorSpec<typeof AGGREGATOR_FLAGS> = {
  name: 'edgeop agent-aggregator',
  description:
    "Aggregate the NodeConfig agents' reports into each NodeConfig's status and roll changes out in waves",
  flags: AGGREGATOR_FLAGS,
  validate: (o) => validateOperatorOptions({ ...o, namespace: [] }),
  reportingController: `${NODECONFIGS.group}/${AGGREGATOR_CONTROLLER_NAME}`,
  controllers: ({ client, manager, log }) => [
    nodeConfigAggregator({ client, factory: manager.factory, logger: log }),
  ],
}
