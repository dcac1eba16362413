/**
 * @module appservice-sharding-simulation — the AppService operator sharded over three replicas under
 * the simulator: each holds its membership Lease, owns the AppServices labelled with its id, and hands
 * them over when members come and go (crashes and partitions make them come and go).
 */
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import { LeaseLock } from '../../src/leader/lease-lock.ts'
import { runWhileLeading } from '../../src/leader/run-while-leading.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { SHARD_LABEL_PREFIX, Shard } from '../../src/sharding/shard.ts'
import type { SimulatedProcess, SimulationOptions, WriteInvariant } from '../../src/testing/index.ts'
import { appServiceSimulation, runAppServiceController } from './appservice-simulation.ts'

const RING = 'appservice'
const SHARD_LABEL = SHARD_LABEL_PREFIX + RING

/** One member of the ring: its membership Lease, its shard and the controller on its share. */
export function shardedAppServiceReplica(id: string): SimulatedProcess {
  return {
    name: id,
    async run(ctx) {
      const { client, clock, signal } = ctx
      const shard = new Shard({ client, ring: RING, namespace: 'ops', id, clock, logger: noopLogger })
      const lock = LeaseLock.fromClient(client, {
        namespace: 'ops',
        name: `${RING}-${id}`,
        identity: id,
        labels: { [shard.label]: id },
      })
      const elector = new LeaderElector({ lock, clock, logger: noopLogger })
      await runWhileLeading(
        elector,
        (member) =>
          Promise.all([
            runAppServiceController(ctx, member, {
              shard,
              fencingToken: (app) => (elector.fencingToken() === undefined ? undefined : shard.token(app)),
            }),
            shard.run(member),
          ]),
        signal,
      )
    },
  }
}

/** A member writes the children and the status of its own AppServices only (no two owners act on one object). */
export const SHARD_WRITE_SAFETY: WriteInvariant[] = [
  {
    name: 'a member writes only for the AppServices labelled with its id',
    check(w, c) {
      const child = w.target.resource === 'deployments' || w.target.resource === 'services'
      const status = w.target.resource === 'appservices' && w.target.subresource === 'status'
      if (!w.process.startsWith('member-') || !(child || status) || !w.target.name) return undefined
      const app = c.store.get(
        `${APPSERVICES.group}/${APPSERVICES.resource}`,
        w.target.namespace,
        w.target.name,
      ) as KubeObject | undefined
      const owner = app?.metadata.labels?.[SHARD_LABEL]
      return owner === undefined || owner === w.process
        ? undefined
        : `${w.process} wrote ${w.target.resource}/${w.target.name} of an AppService owned by ${owner}`
    },
  },
]

/** The sharded simulation for one seed: the leader-elected one's workload and invariants, three members, the shard's write invariant. */
export function shardedAppServiceSimulation(seed: number, minutes = 10): SimulationOptions {
  return {
    ...appServiceSimulation(seed, minutes),
    processes: ['member-a', 'member-b', 'member-c'].map(shardedAppServiceReplica),
    writeSafety: SHARD_WRITE_SAFETY,
  }
}
