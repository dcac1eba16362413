/**
 * @module main — the edgeop binary: `edgeop [run|check|crd|manifests|version] [flags]`.
 *
 * `run` (the default) runs the AppService operator: leader-elected when `--leader-elect`
 * is given, metrics and probes on their bind addresses, graceful shutdown on
 * SIGTERM/SIGINT (a second signal exits at once), exit 1 when leadership is lost.
 */

import {
  checkCommand,
  defineCommand,
  OPERATOR_FLAGS,
  type OperatorOptions,
  runCli,
  stringFlag,
  validateOperatorOptions,
} from './cli/index.ts'
import { KubeClient } from './client/index.ts'
import { type ClusterConfig, loadClusterConfig, toYaml } from './config/index.ts'
import {
  createLogger,
  EventRecorder,
  Manager,
  MetricsRegistry,
  onShutdownSignals,
  type PermissionRequirement,
  restClientMetrics,
} from './controller/index.ts'
import { errorMessage } from './core/index.ts'
import {
  APPSERVICES,
  appServiceController,
  appServiceCrd,
  databaseApi,
  OPERATOR_NAME,
  operatorManifests,
  operatorRules,
} from './operators/appservice/index.ts'
import { VERSION } from './version.ts'

const RUN_FLAGS = {
  ...OPERATOR_FLAGS,
  'database-api': stringFlag(
    'Base URL of the external database service (needed for AppServices with database.enabled).',
    {
      placeholder: 'url',
    },
  ),
}
type RunOptions = OperatorOptions & { databaseApi: string | undefined }

async function connect(
  o: OperatorOptions,
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

async function run(o: RunOptions): Promise<number> {
  const log = createLogger({ level: o.logLevel, format: o.logFormat })
  const shutdown = onShutdownSignals()
  const registry = new MetricsRegistry()
  const { client, config } = await connect(o, registry)
  log.info('starting edgeop', {
    version: VERSION,
    cluster: config.source,
    namespaces: o.namespace.length ? o.namespace : 'all',
  })
  const manager = new Manager({
    client,
    registry,
    logger: log,
    metricsBindAddress: o.metricsBindAddress,
    healthProbeBindAddress: o.healthProbeBindAddress,
    shutdownGracePeriodMs: o.shutdownGracePeriod,
    ...(o.leaderElect
      ? {
          leaderElection: {
            name: o.leaderElectionId || OPERATOR_NAME,
            namespace: o.leaderElectionNamespace || config.namespace,
            leaseDurationMs: o.leaderElectionLeaseDuration,
            renewDeadlineMs: o.leaderElectionRenewDeadline,
            retryPeriodMs: o.leaderElectionRetryPeriod,
          },
        }
      : {}),
  })
  const recorder = new EventRecorder(client, {
    controller: `${APPSERVICES.group}/${OPERATOR_NAME}`,
    instance: process.env.HOSTNAME || 'edgeop',
    logger: log,
  })
  manager.add(
    appServiceController({
      client,
      factory: manager.factory,
      namespaces: o.namespace,
      database: o.databaseApi ? databaseApi(o.databaseApi) : undefined,
      recorder,
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      logger: log,
      ...manager.controllerHooks('appservice', o.maxConcurrentReconciles),
    }),
  )
  manager.onStop(() => recorder.flush())
  try {
    await manager.run(shutdown)
    return 0
  } catch (err) {
    log.error('edgeop stopped with an error', {
      error: errorMessage(err),
      code: (err as { code?: string }).code,
    })
    return 1
  } finally {
    await client.close()
  }
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
    crd: defineCommand({
      description: 'Print the AppService CustomResourceDefinition (generated from its schema)',
      flags: {},
      run: () => void process.stdout.write(toYaml(appServiceCrd())),
    }),
    manifests: defineCommand({
      description:
        'Print every manifest needed to run the operator (namespace, CRD, RBAC, Deployment, NetworkPolicy)',
      flags: {
        image: stringFlag('Container image for the Deployment.', {
          default: `ghcr.io/example/edgeop:${VERSION}`,
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
          `edgeop ${VERSION} (node ${process.version}, ${process.platform}/${process.arch})\n`,
        ),
    }),
  },
})
