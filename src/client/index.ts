/** @module client — the Kubernetes REST client over undici. */

export { DEFAULT_MAX_WATCH_LINE_BYTES } from '../codec/json-watch-decoder.ts'
export {
  ApiError,
  type ApiErrorInit,
  hasStatusCause,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isGoneOrExpired,
  isInternalError,
  isInvalid,
  isNotFound,
  isResourceExpired,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooLargeResourceVersion,
  isTooManyRequests,
  isUnauthorized,
} from '../transport/api-error.ts'
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_MS,
  DEFAULT_MAX_CONNECTIONS,
} from '../transport/connection-pool.ts'
export type { ProxyEnvironment } from '../transport/proxy-selection.ts'
export { TIMEOUT_REASONS } from '../transport/request-errors.ts'
export {
  DEFAULT_BURST,
  DEFAULT_QPS,
  type RequestRateLimiter,
  tokenBucketLimiter,
  unlimited,
} from '../transport/request-rate-limiter.ts'
export { DEFAULT_MAX_RETRIES } from '../transport/request-retry.ts'
export type { Method, RequestSpec, StreamResponse, StreamSpec } from '../transport/request-spec.ts'
export {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_USER_AGENT,
  type RequestObserver,
  Transport,
  type TransportOptions,
} from '../transport/transport.ts'
export type { ApplyOptions, CallOptions, ListCallOptions } from './call-options.ts'
export {
  type DiscoveredGroup,
  type DiscoveredResource,
  type DiscoverySnapshot,
  discover,
  type MappingQuery,
  RestMapper,
} from './discovery.ts'
export { KubeClient } from './kube-client.ts'
export type {
  DeleteOptions,
  ListOptions,
  ResourceVersionMatch,
  WatchOptions,
  WriteOptions,
} from './list-options.ts'
export {
  PROTOBUF_CONFIG_MAPS,
  PROTOBUF_DEPLOYMENTS,
  PROTOBUF_EVENTS,
  PROTOBUF_LEASES,
  PROTOBUF_NAMESPACES,
  PROTOBUF_NODES,
  PROTOBUF_PODS,
  PROTOBUF_SECRETS,
  PROTOBUF_SERVICES,
} from './protobuf-types.ts'
export type { RawWatchOptions, WatchStream } from './raw-watch.ts'
export { apiVersionOf, CORE_TYPES, type ResourceType, resourcePath } from './resource.ts'
export { type JsonPatchOp, type PatchType, ResourceClient, type Scale } from './resource-client.ts'
export { DEFAULT_CONFLICT_RETRY, retryOnConflict } from './retry-on-conflict.ts'
