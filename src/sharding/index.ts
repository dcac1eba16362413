/** @module sharding — a controller's objects split among its replicas: membership Leases, rendezvous hashing, label-selected informers and a drain handshake. */
export { Membership, ownerOf } from './ring.ts'
export {
  DEFAULT_SHARD_PERIOD_MS,
  EPOCH_ANNOTATION_PREFIX,
  SHARD_LABEL_PREFIX,
  Shard,
  type ShardOptions,
  type ShardSource,
} from './shard.ts'
