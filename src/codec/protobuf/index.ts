/**
 * @module protobuf — Kubernetes protobuf for built-in kinds: a decoder driven by a table generated from the
 * Go types of k8s.io/api, lists, watch streams, and the codec a compact store keeps bytes with.
 *
 * Each kind of the table is its own export (`POD_V1`, `DEPLOYMENT_V1`, …), so a bundle carries only the
 * messages of the kinds it imports. Give one to a {@link ResourceType} as `protobuf` and the client lists
 * and watches that resource in protobuf.
 */
export { cutManagedFields, protobufCodec, scanProtobufMeta } from './codec.ts'
export { type DecodeMessageOptions, decodeMessage } from './decode.ts'
export { hasMagic, PROTOBUF_MAGIC, type Unwrapped, unwrap } from './envelope.ts'
export type {
  KindSchema,
  ProtobufDecoders,
  ProtobufObjectOptions,
  ProtobufWatchOptions,
} from './kind-schema.ts'
export {
  CONFIG_MAP_V1,
  CRON_JOB_V1,
  DAEMON_SET_V1,
  DEPLOYMENT_V1,
  ENDPOINT_SLICE_V1,
  EVENT_CORE_V1,
  EVENT_V1,
  INGRESS_V1,
  JOB_V1,
  LEASE_V1,
  LIST_META_V1,
  NAMESPACE_V1,
  NODE_V1,
  PARTIAL_OBJECT_METADATA_V1,
  PERSISTENT_VOLUME_CLAIM_V1,
  POD_V1,
  REPLICA_SET_V1,
  SECRET_V1,
  SERVICE_ACCOUNT_V1,
  SERVICE_V1,
  STATEFUL_SET_V1,
  STATUS_V1,
} from './kinds.generated.ts'
export type { MessageSchema } from './message-schema.ts'
export { decodeProtobufList, decodeProtobufObject } from './objects.ts'
export { PROTOBUF_DECODERS } from './protobuf-decoders.ts'
export { DEFAULT_MAX_WATCH_FRAME_BYTES, decodeProtobufWatchStream } from './watch-frames.ts'
