/**
 * @module cache-sync — the manager's start-up wait: informers' caches synced, or a watched resource the
 * server does not serve reported at once.
 */
import type { InformerFactory } from '../cache/factory.ts'
import type { KubeClient } from '../client/kube-client.ts'
import type { ResourceType } from '../client/resource.ts'
import { type Clock, sleep } from '../core/clock.ts'
import { errorMessage, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { findUnserved, UnservedResourcesError } from './served-resources.ts'

/** How long to wait for caches before giving up at start: 2 min (controller-runtime `CacheSyncTimeout`). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000

/**
 * How long a watched resource must stay missing from discovery before start-up fails: 3 s. A CRD
 * applied in the same `kubectl apply` as the operator is usually served within a second of its
 * creation (it becomes Established, then each apiserver's discovery picks it up); 3 s covers that
 * and still fails in seconds rather than after the cache sync timeout.
 */
export const UNSERVED_CONFIRM_DELAY_MS = 3_000

/** What {@link waitForCaches} waits on and through. */
export interface CacheWaitDeps {
  /** Its discovery tells whether each watched resource is served. */
  client: KubeClient
  /** The informers whose caches are waited for. */
  factory: InformerFactory
  clock: Clock
  logger: Logger
}

/**
 * Waits for the caches while discovery checks, in parallel, that every watched resource is
 * served; a missing one ends the wait at once. When discovery cannot be asked (network, RBAC),
 * the wait goes on and the sync timeout (`timeoutMs`) reports what failed. A stop (`signal`) ends the
 * wait without an error.
 *
 * A cache restored from a snapshot ends the wait for its informer (each controller then waits for
 * the state it trusts, `synced` unless it opted in to `restored`), but only once discovery has
 * answered: a restored cache of a resource whose CRD was deleted meanwhile would otherwise hide the
 * missing CRD. Discovery that cannot be asked (the server out of reach: what a snapshot is for)
 * lets the restored caches serve.
 */
export async function waitForCaches(
  deps: CacheWaitDeps,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const { client, factory, clock, logger } = deps
  const unserved = new AbortController()
  const waited = new AbortController()
  let missing: ResourceType[] = []
  const checking = AbortSignal.any([signal, waited.signal])
  const check = async (): Promise<ResourceType[]> => {
    const first = await findUnserved(client.mapper, factory.types, checking)
    if (first.length === 0) return first
    // A CRD applied together with the operator may not be in discovery yet: ask again once.
    await sleep(UNSERVED_CONFIRM_DELAY_MS, clock, checking)
    return findUnserved(client.mapper, first, checking)
  }
  const checked = check().then(
    (m) => {
      missing = m
      if (m.length > 0) unserved.abort()
    },
    (err: unknown) => {
      if (!waited.signal.aborted && !signal.aborted)
        logger.debug('could not check that watched resources are served', { error: errorMessage(err) })
    },
  )
  try {
    await factory.whenSynced(AbortSignal.any([signal, unserved.signal]), timeoutMs, true)
    // Restored caches: wait for discovery's answer (or its failure) before they serve.
    if (!factory.informers.every((i) => i.hasSynced())) await checked
  } catch (err) {
    // An abort is a stop (the caller's signal) or a missing resource (thrown below), not a sync failure.
    if (!isEdgeopError(err, 'EDGEOP_ERR_ABORTED')) throw err
  } finally {
    waited.abort()
  }
  if (!signal.aborted && missing.length > 0) throw new UnservedResourcesError(missing)
}
