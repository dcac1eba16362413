/**
 * @module kube-client — the entry point: one cluster connection, many resource clients.
 */

import type { ClusterConfig } from '../config/cluster-config.ts'
import type { KubeObject } from '../core/types.ts'
import { type RequestSpec, Transport, type TransportOptions } from '../transport/transport.ts'
import { RestMapper } from './discovery.ts'
import type { ResourceType } from './resource.ts'
import { ResourceClient } from './resource-client.ts'

/**
 * A client for one cluster. Create one per process and share it: it owns the
 * connection pool, the rate limiter and the discovery cache.
 *
 * @example
 * const client = new KubeClient(await loadClusterConfig())
 * const pods = await client.resource(CORE_TYPES.pods, 'default').list({ limit: 100 })
 * await client.close()
 */
export class KubeClient {
  /** The shared connection (pool, rate limiter, retries) every resource client of this client uses. */
  readonly transport: Transport
  /** Kind ↔ resource mapping from discovery, fetched on first lookup and cached. */
  readonly mapper: RestMapper

  /** Opens no connection yet; throws as {@link Transport}'s constructor does (`EDGEOP_ERR_CONFIG`). */
  constructor(config: ClusterConfig, options: TransportOptions = {}) {
    this.transport = new Transport(config, options)
    this.mapper = new RestMapper(this.transport)
  }

  /** The namespace of the loaded context (or the service account's). */
  get defaultNamespace(): string {
    return this.transport.config.namespace
  }

  /**
   * A client for `type`, bound to `namespace` (undefined: all namespaces / cluster-scoped). Its
   * object type is inferred from a typed `type` (`client.resource(CORE_TYPES.deployments, ns)` is a
   * `ResourceClient<Deployment>`); an explicit type argument is taken as given, as before.
   */
  resource<T extends KubeObject = KubeObject>(
    type: ResourceType<T> | ResourceType,
    namespace?: string | undefined,
  ): ResourceClient<T> {
    return new ResourceClient<T>(this.transport, type, namespace)
  }

  /** A raw request to any path (e.g. `/version`, `/readyz`). */
  request<T = unknown>(spec: RequestSpec): Promise<T> {
    return this.transport.request<T>(spec)
  }

  /** Closes the connection pool. */
  close(): Promise<void> {
    return this.transport.close()
  }
}
