/**
 * @module api — the NodeConfig API (platform.example.com/v1alpha1), defined once.
 *
 * A NodeConfig is cluster-scoped: it names files (path, content, mode) that every node
 * whose labels match `spec.nodeSelector` must hold under the agent's root directory.
 * The zod/mini schemas below are the single definition: the TypeScript types are
 * inferred from them, the agent validates with them, and the CRD is generated from them.
 */
import * as z from 'zod/mini'
import type { ResourceType } from '../../client/index.ts'
import type { KubeObject, ObjectMeta } from '../../core/index.ts'
import { customResourceDefinition } from '../../objects/index.ts'

export const GROUP = 'platform.example.com'
export const VERSION = 'v1alpha1'
export const KIND = 'NodeConfig'

/** How the API server addresses NodeConfigs; typed, so clients and informers of it hold {@link NodeConfig}s. */
export const NODECONFIGS: ResourceType<NodeConfig> = {
  group: GROUP,
  version: VERSION,
  resource: 'nodeconfigs',
  namespaced: false,
  kind: KIND,
}

/**
 * Longest accepted `path`, in bytes: Linux's PATH_MAX is 4096 for root + path, so 1 KiB
 * leaves room for any sensible root, and keeps status messages that quote paths short.
 */
export const MAX_PATH_BYTES = 1024
/** Longest path segment, in bytes: Linux NAME_MAX. */
export const MAX_SEGMENT_BYTES = 255
/**
 * Largest `content`, in UTF-8 bytes: 256 KiB. Node configuration files are small; the
 * object must stay well under etcd's 1.5 MiB request limit with several files; every
 * agent caches every NodeConfig in memory; and the agent re-reads and hashes each
 * managed file on every drift check. (The CRD bounds characters, the agent bytes.)
 */
export const MAX_CONTENT_BYTES = 256 * 1024
/** Most files per NodeConfig: bounds one NodeConfig's share of each drift check. */
export const MAX_FILES = 64
/**
 * Longest message of a node's outcome (a NodeConfigReport's, formerly a `status.nodes[]`
 * entry's): enough for a few paths and reasons, and a report stays around 1 KiB.
 */
export const MAX_MESSAGE_LENGTH = 512

/** Octal permission bits only (no setuid, setgid or sticky bit): `0644`, `640`. */
export const MODE_PATTERN = /^0?[0-7]{3}$/

/**
 * A relative, normalised path: segments separated by single `/`, none empty, `.` or
 * `..`, no backslash or control character, no leading `/`. Written without lookahead,
 * so the API server's RE2 engine and JavaScript agree on it. The agent re-checks every
 * path with {@link checkRelativePath} (byte lengths, reserved names, symlinks).
 */
const SEGMENT = String.raw`(?:[^/\\\x00-\x1f\x7f.][^/\\\x00-\x1f\x7f]*|\.[^/\\\x00-\x1f\x7f.][^/\\\x00-\x1f\x7f]*|\.\.[^/\\\x00-\x1f\x7f]+)`
export const PATH_PATTERN = new RegExp(`^${SEGMENT}(?:/${SEGMENT})*$`)

/** One file to keep on the selected nodes. */
export const NodeFile = z.object({
  path: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(MAX_PATH_BYTES),
      z.regex(
        PATH_PATTERN,
        'must be a normalised relative path (no leading /, no . or .. or empty segments)',
      ),
      z.meta({ description: 'Path relative to the agent root, normalised; no "..", no leading "/".' }),
    ),
  content: z
    .string()
    .check(
      z.maxLength(MAX_CONTENT_BYTES),
      z.meta({ description: `File content (UTF-8), at most ${MAX_CONTENT_BYTES} bytes.` }),
    ),
  mode: z._default(
    z
      .string()
      .check(
        z.maxLength(4),
        z.regex(MODE_PATTERN, 'must be octal permission bits such as "0644"'),
        z.meta({ description: 'Octal permission bits, e.g. "0644". No setuid, setgid or sticky bit.' }),
      ),
    '0644',
  ),
})
export type NodeFile = z.infer<typeof NodeFile>

/**
 * Default `spec.rollout.maxUnavailable`: 10 (percent of the selected nodes per wave). A
 * DaemonSet's default is one node at a time, which at a thousand nodes is a thousand steps;
 * ten waves still stop a bad file at the first tenth of the fleet.
 */
export const DEFAULT_MAX_UNAVAILABLE_PERCENT = 10
/**
 * Default `spec.rollout.maxFailures`: 0, so the first node that fails to apply a generation
 * stops its rollout (the conservative choice: a bad file is seen on one node, not on a wave).
 */
export const DEFAULT_MAX_FAILURES = 0

/** `spec.rollout`: how a new generation reaches the selected nodes. */
export const NodeConfigRollout = z
  .object({
    maxUnavailable: z._default(
      z.int().check(
        z.minimum(1),
        z.maximum(100),
        z.meta({
          description: `Percent of the selected nodes that may take a new generation per wave (default ${DEFAULT_MAX_UNAVAILABLE_PERCENT}); 100 applies it everywhere at once.`,
        }),
      ),
      DEFAULT_MAX_UNAVAILABLE_PERCENT,
    ),
    maxFailures: z._default(
      z.int().check(
        z.minimum(0),
        z.meta({
          description: `Nodes that may fail a generation before its rollout stops (default ${DEFAULT_MAX_FAILURES}).`,
        }),
      ),
      DEFAULT_MAX_FAILURES,
    ),
  })
  .check(
    z.meta({
      description: 'How a new generation reaches the selected nodes: in waves, stopping on failures.',
    }),
  )
export type NodeConfigRollout = z.infer<typeof NodeConfigRollout>

/** `spec`: which nodes, which files. */
export const NodeConfigSpec = z
  .object({
    rollout: z.optional(NodeConfigRollout),
    nodeSelector: z.optional(
      z
        .record(z.string(), z.string())
        .check(
          z.meta({ description: 'Node labels that must all match; empty or absent selects every node.' }),
        ),
    ),
    files: z._default(
      z.array(NodeFile).check(
        z.maxLength(MAX_FILES),
        z.meta({
          description: 'Files, keyed by path.',
          kubernetes: { listType: 'map', listMapKeys: ['path'] },
        }),
      ),
      [],
    ),
  })
  .check(z.meta({ description: 'Files for the selected nodes.' }))
export type NodeConfigSpec = z.infer<typeof NodeConfigSpec>

/** The two states of a node's entry. */
export const STATE = { applied: 'Applied', failed: 'Failed' } as const

/** One node's report, written only by that node's agent. */
export const NodeConfigNodeStatus = z.object({
  name: z.string().check(z.meta({ description: 'Node name.' })),
  observedGeneration: z.optional(z.int()),
  state: z.enum([STATE.applied, STATE.failed]),
  message: z.optional(z.string()),
  lastTransitionTime: z.optional(z.string()),
})
export type NodeConfigNodeStatus = z.infer<typeof NodeConfigNodeStatus>

/** A metav1.Condition, as the aggregator writes them. */
export const NodeConfigCondition = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  observedGeneration: z.optional(z.int()),
  lastTransitionTime: z.string(),
})
export type NodeConfigCondition = z.infer<typeof NodeConfigCondition>

/** `status.rollout`: the wave the aggregator has opened for a generation. */
export const NodeConfigRolloutStatus = z.object({
  generation: z.int(),
  /** Nodes whose rollout bucket (0–99) is below this take the generation. */
  percent: z.int().check(z.minimum(0), z.maximum(100)),
})
export type NodeConfigRolloutStatus = z.infer<typeof NodeConfigRolloutStatus>

/**
 * `status`: the aggregate, written only by the leader-elected aggregator (each node's own
 * outcome is its NodeConfigReport). `nodes` is the first design's shared list, read once
 * for the migration and then removed.
 */
export const NodeConfigStatus = z.object({
  observedGeneration: z.optional(z.int()),
  desired: z.optional(z.int().check(z.meta({ description: 'Nodes the NodeConfig selects.' }))),
  applied: z.optional(
    z.int().check(z.meta({ description: 'Selected nodes Applied at observedGeneration.' })),
  ),
  failed: z.optional(z.int().check(z.meta({ description: 'Selected nodes Failed at observedGeneration.' }))),
  rollout: z.optional(NodeConfigRolloutStatus),
  conditions: z.optional(
    z.array(NodeConfigCondition).check(z.meta({ kubernetes: { listType: 'map', listMapKeys: ['type'] } })),
  ),
  nodes: z.optional(
    z.array(NodeConfigNodeStatus).check(
      z.meta({
        description: 'Deprecated: the shared per-node list of the first agents; moved to NodeConfigReports.',
        kubernetes: { listType: 'map', listMapKeys: ['name'] },
      }),
    ),
  ),
})
export type NodeConfigStatus = z.infer<typeof NodeConfigStatus>

/** A NodeConfig object. */
export interface NodeConfig extends KubeObject {
  metadata: ObjectMeta
  spec: NodeConfigSpec
  status?: NodeConfigStatus
}

/** Event reasons (stable: users alert on them). */
export const REASON = {
  written: 'FilesWritten',
  driftCorrected: 'DriftCorrected',
  removed: 'FilesRemoved',
  failed: 'ApplyFailed',
} as const

/** The CRD, generated from the schemas above. */
export function nodeConfigCrd() {
  return customResourceDefinition({
    group: GROUP,
    version: VERSION,
    kind: KIND,
    plural: 'nodeconfigs',
    singular: 'nodeconfig',
    shortNames: ['nodecfg'],
    scope: 'Cluster',
    spec: NodeConfigSpec,
    status: NodeConfigStatus,
    printerColumns: [
      { name: 'Desired', type: 'integer', jsonPath: '.status.desired' },
      { name: 'Applied', type: 'integer', jsonPath: '.status.applied' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.failed' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  })
}
