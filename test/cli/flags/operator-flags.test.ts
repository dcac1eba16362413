import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { formatFlagsHelp, parseFlags, stringFlag } from '../../../src/cli/flags/flags.ts'
import {
  OPERATOR_FLAGS,
  type OperatorOptions,
  SHARD_FLAGS,
  validateOperatorOptions,
} from '../../../src/cli/flags/operator-flags.ts'

/** The operator flags of a sharded operator, as the tests parse them. */
const FLAGS = { ...OPERATOR_FLAGS, ...SHARD_FLAGS }

const DEFAULTS: OperatorOptions & { shard: boolean } = {
  kubeconfig: '',
  context: '',
  namespace: [],
  leaderElect: false,
  shard: false,
  leaderElectionId: '',
  leaderElectionNamespace: '',
  leaderElectionLeaseDuration: 15_000,
  leaderElectionRenewDeadline: 10_000,
  leaderElectionRetryPeriod: 2_000,
  metricsBindAddress: ':8080',
  metricsSecure: true,
  metricsCertPath: '',
  metricsCertName: 'tls.crt',
  metricsCertKey: 'tls.key',
  healthProbeBindAddress: ':8081',
  maxConcurrentReconciles: 1,
  qps: 5,
  burst: 10,
  logLevel: 'info',
  logFormat: 'json',
  shutdownGracePeriod: 30_000,
  cacheDir: '',
  tracing: 'off',
}

const LABEL = 'DNS-1123 label: at most 63 of a-z, 0-9 and "-", starting and ending with a letter or digit'
const SUBDOMAIN =
  'DNS-1123 subdomain: at most 253 of a-z, 0-9, "-" and ".", each dot-separated part starting and ending with a letter or digit'

function parse(argv: string[], env: Record<string, string> = {}) {
  const r = parseFlags(FLAGS, argv, env)
  if (!r.ok) return r.error
  return validateOperatorOptions(r.values) ?? r.values
}

describe('operator flags', () => {
  test('exactly the operator flags (--cache-dir and --tracing included), with controller-runtime defaults', () => {
    assert.deepEqual(Object.keys(OPERATOR_FLAGS), [
      'kubeconfig',
      'context',
      'namespace',
      'leader-elect',
      'leader-election-id',
      'leader-election-namespace',
      'leader-election-lease-duration',
      'leader-election-renew-deadline',
      'leader-election-retry-period',
      'metrics-bind-address',
      'metrics-secure',
      'metrics-cert-path',
      'metrics-cert-name',
      'metrics-cert-key',
      'health-probe-bind-address',
      'max-concurrent-reconciles',
      'qps',
      'burst',
      'log-level',
      'log-format',
      'shutdown-grace-period',
      'cache-dir',
      'tracing',
    ])
    assert.deepEqual(parse([]), DEFAULTS)
  })

  test('F2: --shard is not an operator flag: offered only to an operator that spreads SHARD_FLAGS', () => {
    const r = parseFlags(OPERATOR_FLAGS, ['--shard'], {})
    assert.equal(r.ok ? 'accepted' : r.error, 'unknown flag --shard')
    assert.doesNotMatch(formatFlagsHelp(OPERATOR_FLAGS), /--shard/)
    assert.deepEqual(Object.keys(SHARD_FLAGS), ['shard'])
  })

  const accepted: [string, string[], Record<string, string>, Partial<typeof DEFAULTS>][] = [
    [
      'kubeconfig and context',
      ['--kubeconfig', '/k', '--context=edge'],
      {},
      { kubeconfig: '/k', context: 'edge' },
    ],
    ['namespaces repeat', ['--namespace=a', '--namespace', 'b-2'], {}, { namespace: ['a', 'b-2'] }],
    ['namespaces from EDGEOP_NAMESPACE', [], { EDGEOP_NAMESPACE: 'a,b' }, { namespace: ['a', 'b'] }],
    [
      'leader election with Go durations',
      [
        '--leader-elect',
        '--leader-election-id=op',
        '--leader-election-namespace=ops',
        '--leader-election-lease-duration=1m',
        '--leader-election-renew-deadline=45s',
        '--leader-election-retry-period=5s',
      ],
      {},
      {
        leaderElect: true,
        leaderElectionId: 'op',
        leaderElectionNamespace: 'ops',
        leaderElectionLeaseDuration: 60_000,
        leaderElectionRenewDeadline: 45_000,
        leaderElectionRetryPeriod: 5_000,
      },
    ],
    [
      'leader election from the environment',
      [],
      { EDGEOP_LEADER_ELECT: 'true', EDGEOP_LEADER_ELECTION_ID: 'op' },
      { leaderElect: true, leaderElectionId: 'op' },
    ],
    [
      'bind addresses, including disabled',
      ['--metrics-bind-address=0', '--health-probe-bind-address=127.0.0.1:9440'],
      {},
      { metricsBindAddress: '0', healthProbeBindAddress: '127.0.0.1:9440' },
    ],
    [
      'secure metrics from certificate files (kubebuilder flag names)',
      ['--metrics-cert-path=/certs', '--metrics-cert-name=cert.pem', '--metrics-cert-key=key.pem'],
      {},
      { metricsCertPath: '/certs', metricsCertName: 'cert.pem', metricsCertKey: 'key.pem' },
    ],
    ['plain metrics', ['--metrics-secure=false'], {}, { metricsSecure: false }],
    [
      'plain metrics may share the probes address',
      ['--metrics-secure=false', '--metrics-bind-address=:9000', '--health-probe-bind-address=:9000'],
      {},
      { metricsSecure: false, metricsBindAddress: ':9000', healthProbeBindAddress: ':9000' },
    ],
    [
      'secure metrics and probes on ephemeral ports of one host',
      ['--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0'],
      {},
      { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' },
    ],
    ['IPv6 bind address', ['--metrics-bind-address=[::1]:8080'], {}, { metricsBindAddress: '[::1]:8080' }],
    [
      'workers, qps and burst',
      ['--max-concurrent-reconciles=4', '--qps=-1', '--burst', '50'],
      {},
      { maxConcurrentReconciles: 4, qps: -1, burst: 50 },
    ],
    ['fractional qps', ['--qps=0.5'], {}, { qps: 0.5 }],
    ['qps 0 (the client turns it into 5) and its bounds', ['--qps=0'], {}, { qps: 0 }],
    ['the lowest positive qps', ['--qps=0.01'], {}, { qps: 0.01 }],
    ['the highest qps and burst', ['--qps=10000', '--burst=10000'], {}, { qps: 10_000, burst: 10_000 }],
    ['the most workers', ['--max-concurrent-reconciles=500'], {}, { maxConcurrentReconciles: 500 }],
    [
      'the longest leader-election durations',
      ['--leader-election-lease-duration=1h'],
      {},
      { leaderElectionLeaseDuration: 3_600_000 },
    ],
    ['the longest grace period', ['--shutdown-grace-period=24h'], {}, { shutdownGracePeriod: 86_400_000 }],
    [
      'a Lease name is a DNS-1123 subdomain (dots allowed)',
      ['--leader-election-id=edgeop.example.com'],
      {},
      { leaderElectionId: 'edgeop.example.com' },
    ],
    ['logging', ['--log-level=debug', '--log-format=text'], {}, { logLevel: 'debug', logFormat: 'text' }],
    ['tracing', ['--tracing=otlp'], {}, { tracing: 'otlp' }],
    ['tracing from EDGEOP_TRACING', [], { EDGEOP_TRACING: 'otlp' }, { tracing: 'otlp' }],
    [
      'grace period: 0 and negative are meaningful',
      ['--shutdown-grace-period=0'],
      { EDGEOP_SHUTDOWN_GRACE_PERIOD: '-1s' },
      { shutdownGracePeriod: 0 },
    ],
    [
      'grace period from the environment',
      [],
      { EDGEOP_SHUTDOWN_GRACE_PERIOD: '-1s' },
      { shutdownGracePeriod: -1_000 },
    ],
  ]
  for (const [title, argv, env, expected] of accepted) {
    test(`accepts ${title}`, () => assert.deepEqual(parse(argv, env), { ...DEFAULTS, ...expected }))
  }

  const refused: [string[], Record<string, string>, string][] = [
    [['--qps=fast'], {}, '--qps: expected a number, got "fast"'],
    [['--qps=1e400'], {}, '--qps: not a finite number, got "1e400"'],
    [['--burst=0'], {}, '--burst: must be at least 1, got "0"'],
    [['--max-concurrent-reconciles=0'], {}, '--max-concurrent-reconciles: must be at least 1, got "0"'],
    [['--max-concurrent-reconciles=2.5'], {}, '--max-concurrent-reconciles: expected an integer, got "2.5"'],
    [['--namespace=Bad_NS'], {}, `--namespace: expected a namespace name (${LABEL}), got "Bad_NS"`],
    [
      ['--namespace='],
      {},
      '--namespace: must not be empty (leave --namespace out to watch all namespaces), got ""',
    ],
    [
      ['--namespace=a', '--namespace', ''],
      {},
      '--namespace: must not be empty (leave --namespace out to watch all namespaces), got ""',
    ],
    [
      [],
      { EDGEOP_NAMESPACE: ' ' },
      '--namespace (from EDGEOP_NAMESPACE): must not be empty (leave --namespace out to watch all namespaces), got ""',
    ],
    [['--namespace=a.b'], {}, `--namespace: expected a namespace name (${LABEL}), got "a.b"`],
    [
      ['--leader-elect', '--leader-election-id=Bad_ID!'],
      {},
      `--leader-election-id: expected a Lease name (${SUBDOMAIN}), got "Bad_ID!"`,
    ],
    [
      ['--leader-election-id=a..b'],
      {},
      `--leader-election-id: expected a Lease name (${SUBDOMAIN}), got "a..b"`,
    ],
    [
      ['--leader-election-namespace=Bad_ID!'],
      {},
      `--leader-election-namespace: expected a namespace name (${LABEL}), got "Bad_ID!"`,
    ],
    [
      [`--leader-election-namespace=${'a'.repeat(64)}`],
      {},
      `--leader-election-namespace: expected a namespace name (${LABEL}), got "${'a'.repeat(64)}"`,
    ],
    [['--max-concurrent-reconciles=1e9'], {}, '--max-concurrent-reconciles: must be at most 500, got "1e9"'],
    [['--max-concurrent-reconciles=501'], {}, '--max-concurrent-reconciles: must be at most 500, got "501"'],
    [['--qps=1e400'], {}, '--qps: not a finite number, got "1e400"'],
    [['--qps=10001'], {}, '--qps: must be at most 10000, got "10001"'],
    [['--qps=-2'], {}, '--qps: must be at least -1, got "-2"'],
    [['--qps=-0.5'], {}, '--qps: expected -1 (no limit), 0 (the default, 5) or 0.01..10000, got "-0.5"'],
    [['--qps=0.001'], {}, '--qps: expected -1 (no limit), 0 (the default, 5) or 0.01..10000, got "0.001"'],
    [['--burst=1e6'], {}, '--burst: must be at most 10000, got "1e6"'],
    [
      ['--leader-election-lease-duration=600h'],
      {},
      '--leader-election-lease-duration: must be at most 1h0m0s, got "600h"',
    ],
    [
      ['--leader-election-renew-deadline=2h'],
      {},
      '--leader-election-renew-deadline: must be at most 1h0m0s, got "2h"',
    ],
    [
      ['--leader-election-retry-period=61m'],
      {},
      '--leader-election-retry-period: must be at most 1h0m0s, got "61m"',
    ],
    [['--shutdown-grace-period=600h'], {}, '--shutdown-grace-period: must be at most 24h0m0s, got "600h"'],
    [
      ['--metrics-bind-address=8080'],
      {},
      '--metrics-bind-address: expected [host]:port, or "0" to disable, got "8080"',
    ],
    [
      ['--health-probe-bind-address=:99999'],
      {},
      '--health-probe-bind-address: expected [host]:port, or "0" to disable, got ":99999"',
    ],
    [['--metrics-secure=no'], {}, '--metrics-secure: expected true or false, got "no"'],
    [
      ['--metrics-cert-name=certs/tls.crt'],
      {},
      '--metrics-cert-name: expected a file name (no "/"), got "certs/tls.crt"',
    ],
    [['--metrics-cert-key=..'], {}, '--metrics-cert-key: expected a file name (no "/"), got ".."'],
    [['--metrics-cert-path='], {}, '--metrics-cert-path: must not be empty, got ""'],
    [
      ['--metrics-secure=false', '--metrics-cert-path=/certs'],
      {},
      '--metrics-cert-path: needs --metrics-secure',
    ],
    [
      ['--metrics-bind-address=:9000', '--health-probe-bind-address=:9000'],
      {},
      '--metrics-bind-address: with --metrics-secure, must differ from --health-probe-bind-address (probes stay plain HTTP)',
    ],
    [['--log-level=trace'], {}, '--log-level: expected one of debug, info, warn, error, got "trace"'],
    [['--log-format=yaml'], {}, '--log-format: expected one of json, text, got "yaml"'],
    [['--tracing=jaeger'], {}, '--tracing: expected one of off, otlp, got "jaeger"'],
    [
      ['--leader-election-lease-duration=15'],
      {},
      '--leader-election-lease-duration: expected a duration like 15s, 1m30s or 500ms, got "15"',
    ],
    [
      ['--leader-election-lease-duration=500ms'],
      {},
      '--leader-election-lease-duration: must be at least 1s, got "500ms"',
    ],
    [['--leader-elect'], {}, '--leader-election-id: required with --leader-elect'],
    [
      ['--leader-elect', '--leader-election-id=x', '--leader-election-renew-deadline=15s'],
      {},
      '--leader-election-renew-deadline: must be shorter than --leader-election-lease-duration (15s), got 15s',
    ],
    [
      ['--leader-elect', '--leader-election-id=x', '--leader-election-retry-period=9s'],
      {},
      '--leader-election-retry-period: × 1.2 must be shorter than --leader-election-renew-deadline (10s), got 9s',
    ],
    [[], { EDGEOP_QPS: 'fast' }, '--qps (from EDGEOP_QPS): expected a number, got "fast"'],
    [['--leader-elect=maybe'], {}, '--leader-elect: expected true or false, got "maybe"'],
  ]
  for (const [argv, env, error] of refused) {
    test(`refuses ${JSON.stringify(argv)} ${JSON.stringify(env)}`, () =>
      assert.equal(parse(argv, env), error))
  }

  test('D13: --shard refuses a ring name (--leader-election-id) over 63 characters at flag parse, naming the flag and the limit', () => {
    const long = 'r'.repeat(64)
    assert.equal(
      parse(['--shard', `--leader-election-id=${long}`]),
      `--leader-election-id: with --shard, the ring's name must be at most 63 characters (it is the name part of the label shard.edgeop.io/<ring>), got 64`,
    )
    assert.equal(typeof parse(['--shard', `--leader-election-id=${'r'.repeat(63)}`]), 'object')
    assert.equal(typeof parse(['--leader-elect', `--leader-election-id=${long}`]), 'object')
  })

  test('timing checks apply only with --leader-elect', () => {
    assert.equal(typeof parse(['--leader-election-renew-deadline=1m']), 'object')
  })

  test('the set extends by spreading, with typed values (the node agent adds --node-name, --root)', () => {
    const AGENT_FLAGS = {
      ...OPERATOR_FLAGS,
      'node-name': stringFlag('The node this agent serves.'),
      root: stringFlag('Host root mount.', { default: '/host' }),
    }
    const r = parseFlags(AGENT_FLAGS, ['--node-name=n1', '--qps=2'], { EDGEOP_ROOT: '/mnt' })
    assert.ok(r.ok)
    const nodeName: string = r.values.nodeName
    assert.deepEqual([nodeName, r.values.root, r.values.qps], ['n1', '/mnt', 2])
  })

  test('--help text lists every flag with its default, and every numeric flag with its range', () => {
    const text = formatFlagsHelp(OPERATOR_FLAGS)
    for (const [name, flag] of Object.entries(OPERATOR_FLAGS)) {
      if (['int', 'number', 'duration'].includes(flag.placeholder))
        assert.match(text, new RegExp(`^  --${name} .*\\n.*; range [^;]+; env`, 'm'), name)
    }
    for (const name of Object.keys(OPERATOR_FLAGS)) assert.match(text, new RegExp(`^  --${name}\\b`, 'm'))
    for (const line of [
      '        Elect a leader through a Lease, so that only one replica reconciles. (default false; env EDGEOP_LEADER_ELECT)',
      '  --leader-election-lease-duration duration',
      '        How long standbys wait after the last renewal before taking over. (default 15s; range 1s..1h0m0s; env EDGEOP_LEADER_ELECTION_LEASE_DURATION)',
      '        How long the leader keeps retrying a renewal before it steps down. (default 10s; range 1ms..1h0m0s; env EDGEOP_LEADER_ELECTION_RENEW_DEADLINE)',
      '        Interval between attempts to acquire or renew the Lease. (default 2s; range 1ms..1h0m0s; env EDGEOP_LEADER_ELECTION_RETRY_PERIOD)',
      '        Workers per controller; one object is never reconciled twice at once. (default 1; range 1..500; env EDGEOP_MAX_CONCURRENT_RECONCILES)',
      "        Client-side requests per second to the apiserver. -1 disables the limit (controller-runtime's choice); 0 means the default, 5. (default 5; range -1, 0, or 0.01..10000; env EDGEOP_QPS)",
      '        Requests allowed above --qps in a burst. (default 10; range 1..10000; env EDGEOP_BURST)',
      '        How long in-flight reconciles may run after SIGTERM; 0 does not wait, negative waits forever. (default 30s; range at most 24h0m0s; env EDGEOP_SHUTDOWN_GRACE_PERIOD)',
      '        Address of the /metrics endpoint; "0" disables it. (default ":8080"; env EDGEOP_METRICS_BIND_ADDRESS)',
      '  --namespace name (repeatable)',
      '  --metrics-cert-path dir',
      '        Certificate file name in --metrics-cert-path. (default "tls.crt"; env EDGEOP_METRICS_CERT_NAME)',
      '  --log-level debug|info|warn|error',
    ]) {
      assert.ok(text.split('\n').includes(line), line)
    }
  })
})
