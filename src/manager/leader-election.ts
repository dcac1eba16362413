/**
 * @module leader-election — the manager's leader elector on a Lease (or, sharding, its membership Lease and shard).
 */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES } from '../client/resource.ts'
import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/log.ts'
import type { Lease } from '../core/types.ts'
import { LeaderElector } from '../leader/elector.ts'
import { LeaseLock } from '../leader/lease-lock.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'
import { Shard } from '../sharding/shard.ts'
import type { LeaderElectionOptions } from './manager-options.ts'

/** What the elector runs with: the manager's client, clock, logger and registry. */
export interface LeaderElectionDeps {
  client: KubeClient
  clock: Clock
  logger: Logger
  registry: MetricsRegistry
}

/**
 * The elector of `le` (releasing its Lease on cancel, counting `edgeop_leader_changes_total{name}`) and,
 * with `le.sharding`, the shard whose membership Lease it holds.
 */
export function leaderElection(
  le: LeaderElectionOptions,
  deps: LeaderElectionDeps,
): { elector: LeaderElector; shard: Shard | undefined } {
  const { client, clock, logger, registry } = deps
  const id = randomBytes(4).toString('hex')
  const shard = le.sharding
    ? new Shard({
        client,
        ring: le.name,
        namespace: le.namespace,
        id,
        clock,
        logger,
        registry,
        periodMs: le.retryPeriodMs,
      })
    : undefined
  const changes = registry.counter({
    name: 'edgeop_leader_changes_total',
    help: 'Leader changes.',
    labelNames: ['name'],
  })
  const elector = new LeaderElector({
    lock: le.lock ?? leaseLock(client, le, id, shard),
    releaseOnCancel: true,
    logger,
    clock,
    onNewLeader: (id) => {
      logger.info('leader observed', { leader: id || '(none)' })
      changes.inc({ name: le.name })
    },
    leaseDurationMs: le.leaseDurationMs,
    renewDeadlineMs: le.renewDeadlineMs,
    retryPeriodMs: le.retryPeriodMs,
  })
  return { elector, shard }
}

/**
 * The default lock: the Lease `namespace/name` (a member's `<name>-<id>`, labelled) through `client`,
 * as `<hostname>_<id>` unless named.
 */
function leaseLock(client: KubeClient, le: LeaderElectionOptions, id: string, shard?: Shard): LeaseLock {
  const identity = le.identity ?? `${process.env.HOSTNAME || hostname()}_${id}`
  const leases = () => client.resource<Lease>(CORE_TYPES.leases, le.namespace)
  return new LeaseLock(
    {
      get: (name, o) => leases().get(name, o),
      create: (lease, o) => leases().create(lease, o),
      update: (lease, o) => leases().update(lease, o),
    },
    {
      namespace: le.namespace,
      name: shard ? `${le.name}-${id}` : le.name,
      identity,
      ...(shard ? { labels: { [shard.label]: id } } : {}),
    },
  )
}
