/**
 * @module operator-flags — the operator binary's flags, named as Kubernetes users expect from
 * controller-runtime / kubebuilder operators, each also settable as `EDGEOP_<NAME>`.
 *
 * The set is a plain object: a binary with more flags spreads it,
 * `{ ...OPERATOR_FLAGS, 'node-name': stringFlag('…') }`, and gets typed values for all of them.
 */
import * as z from 'zod/mini'
import { DNS1123_LABEL_MAX_LENGTH } from '../../core/index.ts'
import {
  DEFAULT_JITTER_FACTOR,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
} from '../../leader/index.ts'
import { DEFAULT_LOG_FORMAT, DEFAULT_LOG_LEVEL } from '../../logging/index.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS } from '../../manager/index.ts'
import {
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  DEFAULT_METRICS_BIND_ADDRESS,
  parseBindAddress,
} from '../../server/index.ts'
import { DEFAULT_CERT_NAME, DEFAULT_KEY_NAME } from '../../tls/index.ts'
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
import { kubeName, nonEmpty } from './value-schemas.ts'

/**
 * client-go's `rest.DefaultQPS` / `DefaultBurst` (5 / 10). An edge cluster runs one agent per node, so
 * the client-side limit is what keeps hundreds of them from swamping the apiserver; controller-runtime
 * disables it (`--qps=-1` does the same here) and relies on API Priority and Fairness.
 */
export const DEFAULT_QPS = 5
/** client-go's `rest.DefaultBurst`: requests allowed above {@link DEFAULT_QPS} in a burst. */
export const DEFAULT_BURST = 10
/**
 * Highest `--qps`. One apiserver serves all its clients together 400 reads + 200 writes in flight by
 * default (kube-apiserver `--max-requests-inflight`, `--max-mutating-requests-inflight`); a client
 * limit far above that limits nothing. To lift the limit, disable it with -1 instead.
 */
export const MAX_QPS = 10_000
/**
 * Lowest positive `--qps`: one request per 100 s. Below it, start-up (a LIST and a WATCH per informer)
 * takes hours and a backlog's waits approach the Node timer limit.
 */
export const MIN_POSITIVE_QPS = 0.01
/** Highest `--burst`, for the reason of {@link MAX_QPS}: a burst that large is no limit. */
export const MAX_BURST = 10_000
/** controller-runtime `MaxConcurrentReconciles` default: one worker per controller. */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 1
/**
 * Highest `--max-concurrent-reconciles`. Every worker starts at once and can hold a request in flight;
 * the apiserver admits 600 in flight for all clients together by default (see {@link MAX_QPS}), so
 * more workers in one process only queue, and `1e9` of them exhaust memory before the first reconcile.
 */
export const MAX_MAX_CONCURRENT_RECONCILES = 500
/**
 * Longest leader-election duration (lease, renew deadline, retry period): 1 h. After a crash the
 * standbys wait one lease duration before taking over; past an hour that is an outage, not a failover.
 * client-go sets no maximum; kube-controller-manager's lease is 15 s.
 */
export const MAX_LEADER_ELECTION_DURATION_MS = 3_600_000
/**
 * Longest `--shutdown-grace-period`: 24 h. Longer is "forever" in practice, which a negative value
 * says directly.
 */
export const MAX_SHUTDOWN_GRACE_PERIOD_MS = 86_400_000
/** Namespace names are DNS-1123 labels (apimachinery `ValidateNamespaceName`). */
const NAMESPACE = kubeName('label', 'a namespace name')
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

/** A file name inside a directory: no `/`, not `.` or `..`, at most 255 bytes (the usual NAME_MAX). */
const FILE_NAME = z
  .string()
  .check(
    z.refine((s) => /^[^/\0]{1,255}$/.test(s) && s !== '.' && s !== '..', 'expected a file name (no "/")'),
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
    empty: 'must not be empty (leave --namespace out to watch all namespaces)',
  }),
  'leader-elect': booleanFlag('Elect a leader through a Lease, so that only one replica reconciles.'),
  'leader-election-id': stringFlag(
    'Name of the Lease used for leader election (a DNS-1123 subdomain). Required with --leader-elect.',
    { schema: kubeName('subdomain', 'a Lease name'), placeholder: 'name' },
  ),
  'leader-election-namespace': stringFlag("Namespace of the Lease. Unset: the pod's own namespace.", {
    schema: NAMESPACE,
    placeholder: 'name',
  }),
  'leader-election-lease-duration': durationFlag(
    'How long standbys wait after the last renewal before taking over.',
    {
      default: DEFAULT_LEASE_DURATION_MS,
      min: 1_000,
      max: MAX_LEADER_ELECTION_DURATION_MS,
    },
  ),
  'leader-election-renew-deadline': durationFlag(
    'How long the leader keeps retrying a renewal before it steps down.',
    {
      default: DEFAULT_RENEW_DEADLINE_MS,
      min: 1,
      max: MAX_LEADER_ELECTION_DURATION_MS,
    },
  ),
  'leader-election-retry-period': durationFlag('Interval between attempts to acquire or renew the Lease.', {
    default: DEFAULT_RETRY_PERIOD_MS,
    min: 1,
    max: MAX_LEADER_ELECTION_DURATION_MS,
  }),
  'metrics-bind-address': stringFlag('Address of the /metrics endpoint; "0" disables it.', {
    default: DEFAULT_METRICS_BIND_ADDRESS,
    schema: BIND_ADDRESS,
    placeholder: 'address',
  }),
  'metrics-secure': booleanFlag(
    'Serve /metrics over HTTPS to callers whose token the apiserver allows GET /metrics; false: plain HTTP to anyone.',
    { default: true },
  ),
  'metrics-cert-path': stringFlag(
    'Directory with the /metrics certificate and key, reloaded on change. Unset: self-signed.',
    { schema: nonEmpty(), placeholder: 'dir' },
  ),
  'metrics-cert-name': stringFlag('Certificate file name in --metrics-cert-path.', {
    default: DEFAULT_CERT_NAME,
    schema: FILE_NAME,
    placeholder: 'name',
  }),
  'metrics-cert-key': stringFlag('Key file name in --metrics-cert-path.', {
    default: DEFAULT_KEY_NAME,
    schema: FILE_NAME,
    placeholder: 'name',
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
      max: MAX_MAX_CONCURRENT_RECONCILES,
    },
  ),
  qps: numberFlag(
    `Client-side requests per second to the apiserver. -1 disables the limit (controller-runtime's choice); 0 means the default, ${DEFAULT_QPS}.`,
    {
      default: DEFAULT_QPS,
      min: -1,
      max: MAX_QPS,
      also: {
        test: (n) => n === -1 || n === 0 || n >= MIN_POSITIVE_QPS,
        message: `expected -1 (no limit), 0 (the default, ${DEFAULT_QPS}) or ${MIN_POSITIVE_QPS}..${MAX_QPS}`,
      },
      rangeText: `-1, 0, or ${MIN_POSITIVE_QPS}..${MAX_QPS}`,
    },
  ),
  burst: numberFlag('Requests allowed above --qps in a burst.', {
    default: DEFAULT_BURST,
    integer: true,
    min: 1,
    max: MAX_BURST,
  }),
  'log-level': enumFlag('Lowest level logged.', ['debug', 'info', 'warn', 'error'], DEFAULT_LOG_LEVEL),
  'log-format': enumFlag('json for log pipelines, text for terminals.', ['json', 'text'], DEFAULT_LOG_FORMAT),
  'shutdown-grace-period': durationFlag(
    'How long in-flight reconciles may run after SIGTERM; 0 does not wait, negative waits forever.',
    { default: DEFAULT_SHUTDOWN_GRACE_PERIOD_MS, max: MAX_SHUTDOWN_GRACE_PERIOD_MS },
  ),
  'cache-dir': stringFlag(
    'Directory for cache snapshots (warm or offline start): one process each (edgeop.lock), created 0700, not a system directory nor (agent) overlapping --root.',
    { schema: nonEmpty(), placeholder: 'dir' },
  ),
  tracing: enumFlag(
    'otlp: export traces over OTLP/HTTP JSON, as the OTEL_* variables configure.',
    ['off', 'otlp'],
    'off',
  ),
}

/**
 * The flag of an operator whose controllers split their objects among the replicas (spread it into its
 * set): `--shard`, leader election per object through `Manager.shard`. Not in {@link OPERATOR_FLAGS},
 * because only an operator that scopes its informers to `shard.selector` and guards its reconciler with
 * `shard.guard` is sharded by it; offered to any other, two replicas reconciled the same objects.
 */
export const SHARD_FLAGS = {
  shard: booleanFlag(
    'Split the objects among the replicas (the ring --leader-election-id, at most 63 characters) instead.',
  ),
}

/** The flags of an operator that serves admission webhooks (`OperatorSpec.webhooks`); spread them into its set. */
export const WEBHOOK_FLAGS = {
  // Off unless asked for (the shipped manifests ask for :9443): a webhook needs its Service and
  // configurations, which a process started outside the cluster does not have.
  'webhook-bind-address': stringFlag(
    'Address of the admission webhook server (HTTPS), e.g. :9443; "0" disables it.',
    {
      default: '0',
      schema: BIND_ADDRESS,
      placeholder: 'address',
    },
  ),
  'webhook-cert-dir': stringFlag(
    'Directory with the webhook tls.crt and tls.key, reloaded on change. Unset: own CA kept in a Secret.',
    { schema: nonEmpty(), placeholder: 'dir' },
  ),
}

/** Parsed operator options (durations in milliseconds). */
export type OperatorOptions = FlagValues<typeof OPERATOR_FLAGS>

/**
 * Checks of the metrics flags together: a certificate directory needs `--metrics-secure`, and secure
 * metrics need an address of their own (the probes stay plain HTTP for the kubelet). Returns one line
 * naming the flag, or undefined when valid.
 */
export function validateMetricsOptions(
  o: Pick<
    OperatorOptions,
    'metricsSecure' | 'metricsCertPath' | 'metricsBindAddress' | 'healthProbeBindAddress'
  >,
): string | undefined {
  if (!o.metricsSecure && o.metricsCertPath) return '--metrics-cert-path: needs --metrics-secure'
  const at = parseBindAddress(o.metricsBindAddress)
  if (o.metricsSecure && at && at.port !== 0 && o.metricsBindAddress === o.healthProbeBindAddress) {
    return '--metrics-bind-address: with --metrics-secure, must differ from --health-probe-bind-address (probes stay plain HTTP)'
  }
  return undefined
}

/**
 * Checks that span several flags: {@link validateMetricsOptions}, then client-go `NewLeaderElector`'s
 * rules: with `--leader-elect`, an election ID is required and lease duration > renew deadline > retry
 * period × 1.2. Returns one line naming the flag, or undefined when valid.
 */
export function validateOperatorOptions(o: OperatorOptions & { shard?: boolean }): string | undefined {
  const metrics = validateMetricsOptions(o)
  if (metrics !== undefined || !(o.leaderElect || o.shard)) return metrics
  if (o.leaderElectionId === '')
    return `--leader-election-id: required with --${o.shard ? 'shard' : 'leader-elect'}`
  // The ring's name is the name part of the label key shard.edgeop.io/<ring>, at most 63 characters;
  // a longer one passed every check here and failed at the first label write.
  if (o.shard && o.leaderElectionId.length > DNS1123_LABEL_MAX_LENGTH)
    return `--leader-election-id: with --shard, the ring's name must be at most ${DNS1123_LABEL_MAX_LENGTH} characters (it is the name part of the label shard.edgeop.io/<ring>), got ${o.leaderElectionId.length}`
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
