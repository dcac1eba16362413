/**
 * @module main — the edgeop binary: `edgeop [run|check|crd|manifests|version] [flags]`.
 *
 * `run` (the default) runs the AppService operator: leader-elected when `--leader-elect`
 * is given, metrics and probes on their bind addresses, graceful shutdown on
 * SIGTERM/SIGINT (a second signal exits at once), exit 1 when leadership is lost.
 */

import {
  booleanFlag,
  checkCommand,
  defineCommand,
  durationFlag,
  type FlagValues,
  httpUrl,
  imageReference,
  kubeName,
  nonEmpty,
  OPERATOR_FLAGS,
  type OperatorOptions,
  runCli,
  stringFlag,
  validateMetricsOptions,
  validateOperatorOptions,
} from './cli/index.ts'
import { KubeClient } from './client/index.ts'
import { type ClusterConfig, loadClusterConfig, toYaml } from './config/index.ts'
import { errorMessage, isEdgeopError, type Logger } from './core/index.ts'
import {
  type LeaderElectionOptions,
  Manager,
  onShutdownSignals,
  type PermissionRequirement,
} from './manager/index.ts'
import { EventRecorder } from './objects/index.ts'
import { createLogger, MetricsRegistry, restClientMetrics } from './observability/index.ts'
import {
  APPSERVICES,
  appServiceController,
  appServiceCrd,
  DATABASE_DEPENDENCY,
  databaseApi,
  OPERATOR_NAME,
  operatorManifests,
  operatorRules,
} from './operators/appservice/index.ts'
import {
  checkAgentRoot,
  DEFAULT_AGENT_ROOT,
  DEFAULT_RECHECK_INTERVAL_MS,
  MAX_RECHECK_INTERVAL_MS,
  MIN_RECHECK_INTERVAL_MS,
  nodeConfigAgent,
  nodeConfigCrd,
} from './operators/nodeconfig/index.ts'
import { CircuitBreaker } from './resilience/index.ts'
import { VERSION } from './version.ts'

const RUN_FLAGS = {
  ...OPERATOR_FLAGS,
  'database-api': stringFlag(
    'Base URL (absolute http:// or https://) of the external database service (needed for AppServices with database.enabled).',
    { schema: httpUrl(), placeholder: 'url' },
  ),
}
type RunOptions = OperatorOptions & { databaseApi: string | undefined }

/** The node agent's flags: the operator's, without leader election (each node is its own shard). */
const {
  'leader-elect': _le,
  'leader-election-id': _id,
  'leader-election-namespace': _ns,
  'leader-election-lease-duration': _ld,
  'leader-election-renew-deadline': _rd,
  'leader-election-retry-period': _rp,
  namespace: _n,
  ...AGENT_BASE
} = OPERATOR_FLAGS
const AGENT_FLAGS = {
  ...AGENT_BASE,
  'node-name': stringFlag(
    'Name of the node this agent runs on (the downward API gives spec.nodeName; a DNS-1123 subdomain). Required.',
    { schema: kubeName('subdomain', 'a node name'), placeholder: 'name' },
  ),
  root: stringFlag(
    'Directory under which NodeConfig files are written; nothing outside it is touched. Created if missing; must be writable, and neither a system directory (/, /etc, /usr, /var, …) nor inside /bin, /boot, /dev, /etc, /lib*, /proc, /root, /sbin, /sys or /usr.',
    { default: DEFAULT_AGENT_ROOT, schema: nonEmpty(), placeholder: 'dir' },
  ),
  'allow-system-root': booleanFlag(
    "Accept a system directory as --root: anyone who can create a NodeConfig can then replace the node's own files.",
  ),
  'recheck-interval': durationFlag('How often files are re-checked for drift (hand edits, deletions).', {
    default: DEFAULT_RECHECK_INTERVAL_MS,
    min: MIN_RECHECK_INTERVAL_MS,
    max: MAX_RECHECK_INTERVAL_MS,
  }),
}

async function connect(
  o: Pick<OperatorOptions, 'kubeconfig' | 'context' | 'qps' | 'burst'>,
  registry?: MetricsRegistry,
): Promise<{ client: KubeClient; config: ClusterConfig }> {
  const config = await loadClusterConfig({
    ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context ? { context: o.context } : {}),
  })
  const client = new KubeClient(config, {
    qps: o.qps,
    burst: o.burst,
    ...(registry ? { observer: restClientMetrics(registry) } : {}),
  })
  return { client, config }
}

/** Permissions `check` verifies: the ClusterRole's rules, per watched namespace. */
function requiredPermissions(o: OperatorOptions): PermissionRequirement[] {
  const scopes = o.namespace.length ? o.namespace : [undefined]
  return operatorRules().flatMap((rule) =>
    rule.resources.flatMap((r) => {
      const [resource, subresource] = r.split('/') as [string, string | undefined]
      return scopes.map((namespace) => ({
        group: rule.apiGroups[0] ?? '',
        resource,
        ...(subresource ? { subresource } : {}),
        verbs: rule.verbs,
        ...(namespace ? { namespace } : {}),
      }))
    }),
  )
}

/** What both commands share: the options that shape the process. */
type ProcessOptions = Pick<
  OperatorOptions,
  | 'kubeconfig'
  | 'context'
  | 'qps'
  | 'burst'
  | 'logLevel'
  | 'logFormat'
  | 'metricsBindAddress'
  | 'healthProbeBindAddress'
  | 'metricsSecure'
  | 'metricsCertPath'
  | 'metricsCertName'
  | 'metricsCertKey'
  | 'shutdownGracePeriod'
>

/** How to install what a missing-CRD error names: the CRDs alone, or everything the operator needs. */
const INSTALL_CRDS_HINT =
  '`edgeop crd | kubectl apply -f -` installs the CRDs (`edgeop manifests | kubectl apply -f -`: the whole operator)'

/**
 * Connects, builds the Manager and an event recorder, lets `setup` add controllers,
 * runs until shutdown, and maps the outcome to an exit code (1 when leadership was
 * lost or start-up failed).
 */
async function serve(
  o: ProcessOptions,
  what: { name: string; reporter: string; instance: string; logFields: Record<string, unknown> },
  setup: (ctx: {
    client: KubeClient
    config: ClusterConfig
    manager: Manager
    recorder: EventRecorder
    log: Logger
  }) => void,
  leaderElection?: (config: ClusterConfig) => LeaderElectionOptions | undefined,
): Promise<number> {
  const log = createLogger({ level: o.logLevel, format: o.logFormat })
  const shutdown = onShutdownSignals()
  const registry = new MetricsRegistry()
  const { client, config } = await connect(o, registry)
  log.info(`starting ${what.name}`, { version: VERSION, cluster: config.source, ...what.logFields })
  const elect = leaderElection?.(config)
  const manager = new Manager({
    client,
    registry,
    logger: log,
    metricsBindAddress: o.metricsBindAddress,
    healthProbeBindAddress: o.healthProbeBindAddress,
    ...(o.metricsSecure
      ? {
          secureMetrics: {
            certName: o.metricsCertName,
            keyName: o.metricsCertKey,
            ...(o.metricsCertPath ? { certDir: o.metricsCertPath } : {}),
          },
        }
      : {}),
    shutdownGracePeriodMs: o.shutdownGracePeriod,
    ...(elect ? { leaderElection: elect } : {}),
  })
  const recorder = new EventRecorder(client, {
    controller: what.reporter,
    instance: what.instance,
    logger: log,
  })
  setup({ client, config, manager, recorder, log })
  manager.onStop(() => recorder.flush())
  try {
    await manager.run(shutdown)
    return 0
  } catch (err) {
    if (isEdgeopError(err, 'EDGEOP_ERR_DISCOVERY') && 'crds' in err) {
      // A CRD is not installed: one line saying which, and the command that installs it.
      log.error(`${what.name} cannot start: ${err.message}. ${INSTALL_CRDS_HINT}`, { code: err.code })
      return 1
    }
    log.error(`${what.name} stopped with an error`, {
      error: errorMessage(err),
      code: (err as { code?: string }).code,
    })
    return 1
  } finally {
    await client.close()
  }
}

function run(o: RunOptions): Promise<number> {
  return serve(
    o,
    {
      name: 'edgeop',
      reporter: `${APPSERVICES.group}/${OPERATOR_NAME}`,
      instance: process.env.HOSTNAME || 'edgeop',
      logFields: { namespaces: o.namespace.length ? o.namespace : 'all' },
    },
    ({ client, manager, recorder, log }) =>
      manager.add(
        appServiceController({
          client,
          factory: manager.factory,
          namespaces: o.namespace,
          database: o.databaseApi ? databaseApi(o.databaseApi) : undefined,
          breaker: new CircuitBreaker({ dependency: DATABASE_DEPENDENCY, registry: manager.registry }),
          ...(manager.elector ? { fencingToken: () => manager.elector?.fencingToken() } : {}),
          recorder,
          maxConcurrentReconciles: o.maxConcurrentReconciles,
          logger: log,
        }),
      ),
    (config) =>
      o.leaderElect
        ? {
            name: o.leaderElectionId,
            namespace: o.leaderElectionNamespace || config.namespace,
            leaseDurationMs: o.leaderElectionLeaseDuration,
            renewDeadlineMs: o.leaderElectionRenewDeadline,
            retryPeriodMs: o.leaderElectionRetryPeriod,
          }
        : undefined,
  )
}

function agent(o: FlagValues<typeof AGENT_FLAGS>): Promise<number> {
  return serve(
    o,
    {
      name: 'edgeop agent',
      reporter: 'platform.example.com/nodeconfig-agent',
      instance: o.nodeName,
      logFields: { node: o.nodeName, root: o.root },
    },
    ({ client, manager, recorder, log }) =>
      manager.add(
        nodeConfigAgent({
          client,
          factory: manager.factory,
          nodeName: o.nodeName,
          root: o.root,
          recorder,
          recheckIntervalMs: o.recheckInterval,
          logger: log.child({ node: o.nodeName }),
        }),
      ),
  )
}

void runCli({
  name: 'edgeop',
  description: `edgeop ${VERSION}: the AppService operator on the edgeop runtime`,
  defaultCommand: 'run',
  commands: {
    run: defineCommand({
      description: 'Run the AppService operator (the default command)',
      flags: RUN_FLAGS,
      validate: validateOperatorOptions,
      run: (values) => run(values as RunOptions),
    }),
    check: checkCommand({
      requirements: (o) => ({
        resources: [{ group: APPSERVICES.group, resource: APPSERVICES.resource }],
        permissions: requiredPermissions(o),
      }),
    }),
    agent: defineCommand({
      description:
        'Run the NodeConfig node agent for one node (no leader election: each node is its own shard)',
      flags: AGENT_FLAGS,
      validate: (o) =>
        validateMetricsOptions(o) ??
        (o.nodeName ? undefined : '--node-name: required (set it from spec.nodeName with the downward API)'),
      precheck: async (o) => {
        const problem = await checkAgentRoot(o.root, { allowSystemRoot: o.allowSystemRoot })
        if (problem === undefined) return undefined
        return `--root: ${problem.message}${problem.kind === 'system' ? ' (--allow-system-root accepts it)' : ''}`
      },
      run: (values) => agent(values),
    }),
    crd: defineCommand({
      description:
        'Print the CustomResourceDefinitions (AppService, NodeConfig), generated from their schemas',
      flags: {},
      run: () =>
        void process.stdout.write([appServiceCrd(), nodeConfigCrd()].map((c) => toYaml(c)).join('---\n')),
    }),
    manifests: defineCommand({
      description:
        'Print every manifest needed to run the operator (namespace, CRD, RBAC, Deployment, metrics Service, NetworkPolicy)',
      flags: {
        image: stringFlag('Container image for the Deployment.', {
          default: `ghcr.io/example/edgeop:${VERSION}`,
          schema: imageReference(),
          placeholder: 'image',
        }),
      },
      run: (values) => {
        const files = operatorManifests(values.image)
        process.stdout.write(
          Object.values(files)
            .flat()
            .map((d) => toYaml(d))
            .join('---\n'),
        )
      },
    }),
    version: defineCommand({
      description: 'Print the version',
      flags: {},
      run: () =>
        void process.stdout.write(
          `edgeop ${VERSION} (node ${process.version}, ${process.platform}/${process.arch}${process.execArgv.length > 0 ? `, ${process.execArgv.join(' ')}` : ''})\n`,
        ),
    }),
  },
})
