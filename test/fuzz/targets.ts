/**
 * @module targets — every fuzz target, by name: one per parser or server entry point edgeop exposes to
 * input it does not control.
 */
import type { FuzzTarget } from './harness.ts'
import { admissionReview } from './targets/admission-review.ts'
import { clustersFile } from './targets/clusters-file.ts'
import { conversionReview } from './targets/conversion-review.ts'
import { jsonScan } from './targets/json-scan.ts'
import { kubeconfig } from './targets/kubeconfig.ts'
import { nodeconfigPaths } from './targets/nodeconfig-paths.ts'
import { opsRequest } from './targets/ops-request.ts'
import { protobufFrames } from './targets/protobuf-frames.ts'
import { secureMetricsRequest } from './targets/secure-metrics-request.ts'
import { snapshotFile } from './targets/snapshot-file.ts'
import { watchDecoder } from './targets/watch-decoder.ts'
import { webhookRequest } from './targets/webhook-request.ts'

/** The targets, in the order the bounded run and `npm run fuzz -- all` take them. */
export const TARGETS: readonly FuzzTarget[] = [
  opsRequest,
  secureMetricsRequest,
  webhookRequest,
  admissionReview,
  conversionReview,
  kubeconfig,
  jsonScan,
  watchDecoder,
  protobufFrames,
  snapshotFile,
  clustersFile,
  nodeconfigPaths,
]
