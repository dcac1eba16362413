/**
 * @module operator-flags — the operator binary's flags, named as Kubernetes users expect from
 * controller-runtime / kubebuilder operators, each also settable as `EDGEOP_<NAME>`.
 *
 * The set is a plain object: a binary with more flags spreads it,
 * `{ ...OPERATOR_FLAGS, 'node-name': stringFlag('…') }`, and gets typed values for all of them.
 */
import * as z from 'zod/mini'
import {
  DEFAULT_JITTER_FACTOR,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from '../leader/index.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS } from '../manager/index.ts'
import {
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  DEFAULT_LOG_FORMAT,
  DEFAULT_LOG_LEVEL,
  DEFAULT_METRICS_BIND_ADDRESS,
  parseBindAddress,
} from '../observability/index.ts'
import { formatDuration } from './duration.ts'
import {
  booleanFlag,
  durationFlag,
  enumFlag,
  type FlagValues,
  listFlag,
  numberFlag,
  stringFlag,
} from './flags.ts'

/**
 * client-go's `rest.DefaultQPS` / `DefaultBurst` (5 / 10). An edge cluster runs one agent per node, so
 * the client-side limit is what keeps hundreds of them from swamping the apiserver; controller-runtime
 * disables it (`--qps=-1` does the same here) and relies on API Priority and Fairness.
 */
export const DEFAULT_QPS = 5
/** client-go's `rest.DefaultBurst`: requests allowed above {@link DEFAULT_QPS} in a burst. */
export const DEFAULT_BURST = 10
/** controller-runtime `MaxConcurrentReconciles` default: one worker per controller. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1
/** Kubernetes namespace names are DNS-1123 labels. */
const NAMESPACE = z
  .string()
  .check(z.regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected a namespace name (DNS-1123 label)'))
/** Go-style `[host]:port`, or `0` / empty to disable: the ops server's own parser decides. */
const BIND_ADDRESS = z.string().check(
  z.refine((s) => {
    try {
      parseBindAddress(s)
      return true
    } catch {
      return false
    }
  }, 'expected [host]:port, or "0" to disable'),
)

/** The flags of an operator binary. */
export const OPERATOR_FLAGS = {
  kubeconfig: stringFlag(
    'Path to a kubeconfig file. Unset: $KUBECONFIG, then in-cluster, then ~/.kube/config.',
    {
      placeholder: 'path',
    },
  ),
  context: stringFlag('Kubeconfig context to use. Unset: its current-context.'),
  namespace: listFlag('Namespace to watch; repeat for several. None: all namespaces.', {
    schema: NAMESPACE,
    placeholder: 'name',
  }),
  'leader-elect': booleanFlag('Elect a leader through a Lease, so that only one replica reconciles.'),
  'leader-election-id': stringFlag(
    'Name of the Lease used for leader election. Required with --leader-elect.',
  ),
  'leader-election-namespace': stringFlag("Namespace of the Lease. Unset: the pod's own namespace."),
  'leader-election-lease-duration': durationFlag(
    'How long standbys wait after the last renewal before taking over.',
    {
      default: DEFAULT_LEASE_DURATION_MS,
      min: 1_000,
    },
  ),
  'leader-election-renew-deadline': durationFlag(
    'How long the leader keeps retrying a renewal before it steps down.',
    {
      default: DEFAULT_RENEW_DEADLINE_MS,
      min: 1,
    },
  ),
  'leader-election-retry-period': durationFlag('Interval between attempts to acquire or renew the Lease.', {
    default: DEFAULT_RETRY_PERIOD_MS,
    min: 1,
  }),
  'metrics-bind-address': stringFlag('Address of the /metrics endpoint; "0" disables it.', {
    default: DEFAULT_METRICS_BIND_ADDRESS,
    schema: BIND_ADDRESS,
    placeholder: 'address',
  }),
  'health-probe-bind-address': stringFlag(
    'Address of the /healthz and /readyz endpoints; "0" disables them.',
    {
      default: DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
      schema: BIND_ADDRESS,
      placeholder: 'address',
    },
  ),
  'max-concurrent-reconciles': numberFlag(
    'Workers per controller; one object is never reconciled twice at once.',
    {
      default: DEFAULT_MAX_CONCURRENT_RECONCILES,
      integer: true,
      min: 1,
    },
  ),
  qps: numberFlag('Client-side requests per second to the apiserver; negative disables the limit.', {
    default: DEFAULT_QPS,
  }),
  burst: numberFlag('Requests allowed above --qps in a burst.', {
    default: DEFAULT_BURST,
    integer: true,
    min: 1,
  }),
  'log-level': enumFlag('Lowest level logged.', ['debug', 'info', 'warn', 'error'], DEFAULT_LOG_LEVEL),
  'log-format': enumFlag('json for log pipelines, text for terminals.', ['json', 'text'], DEFAULT_LOG_FORMAT),
  'shutdown-grace-period': durationFlag(
    'How long in-flight reconciles may run after SIGTERM; 0 does not wait, negative waits forever.',
    { default: DEFAULT_SHUTDOWN_GRACE_PERIOD_MS },
  ),
}

/** Parsed operator options (durations in milliseconds). */
export type OperatorOptions = FlagValues<typeof OPERATOR_FLAGS>

/**
 * Checks that span several flags (client-go `NewLeaderElector`'s rules): with `--leader-elect`, an
 * election ID is required and lease duration > renew deadline > retry period × 1.2. Returns one line
 * naming the flag, or undefined when valid.
 */
export function validateOperatorOptions(o: OperatorOptions): string | undefined {
  if (!o.leaderElect) return undefined
  if (o.leaderElectionId === '') return '--leader-election-id: required with --leader-elect'
  const lease = o.leaderElectionLeaseDuration
  const renew = o.leaderElectionRenewDeadline
  const retry = o.leaderElectionRetryPeriod
  if (renew >= lease) {
    return `--leader-election-renew-deadline: must be shorter than --leader-election-lease-duration (${formatDuration(lease)}), got ${formatDuration(renew)}`
  }
  if (renew <= retry * DEFAULT_JITTER_FACTOR) {
    return `--leader-election-retry-period: × ${DEFAULT_JITTER_FACTOR} must be shorter than --leader-election-renew-deadline (${formatDuration(renew)}), got ${formatDuration(retry)}`
  }
  return undefined
}
