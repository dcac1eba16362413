/**
 * @module operator-command — the `run` command of an operator binary: kubebuilder's `main.go` as one
 * declaration (the {@link OperatorSpec} it runs is in operator-spec.ts).
 *
 * From the parsed flags it builds, in order: the logger (`--log-level`, `--log-format`, or the user's),
 * the shutdown signal handler (controller-runtime `SetupSignalHandler`), the cluster configuration and a
 * {@link KubeClient} whose requests feed `rest_client_*` metrics, the {@link Manager} (probes, metrics,
 * leader election with `--leader-elect`, the grace period, a tracer with `--tracing=otlp`), an
 * {@link EventRecorder}; then it adds the
 * spec's controllers (`manager.add`: their reconcile and workqueue metrics; one the spec's function
 * already added is not added again) and runs until a signal.
 * Exit code: 0 after a clean stop, 2 when it cannot start because of what it was given, 1 when the
 * manager failed otherwise or leadership was lost.
 */

import { dirname } from 'node:path'
import { lockCacheDir } from '../cache/index.ts'
import {
  type Command,
  defineCommand,
  EXIT_USAGE,
  type FlagSet,
  type FlagValues,
  OPERATOR_FLAGS,
  type OperatorOptions,
  validateOperatorOptions,
} from '../cli/index.ts'
import { KubeClient } from '../client/index.ts'
import { type ClusterConfig, loadClusterConfig } from '../config/index.ts'
import { Controller } from '../controller/index.ts'
import { definedProps } from '../core/defined-props.ts'
import { errorMessage, isEdgeopError, type Logger } from '../core/index.ts'
import { createLogger } from '../logging/index.ts'
import { ClusterSet, type LeaderElectionOptions, Manager, onShutdownSignals } from '../manager/index.ts'
import { MetricsRegistry, restClientMetrics } from '../metrics/index.ts'
import { EventRecorder } from '../objects/index.ts'
import { clusterRef, followClustersFile, readClustersFile } from './clusters-file.ts'
import type { OperatorContext, OperatorSpec, ProcessFlags } from './operator-spec.ts'
import { otlpTracer } from './tracing.ts'
import { startWebhooks } from './webhooks.ts'

/** The options a run reads from its flag set, whatever else the set holds. */
type RunValues = Pick<
  OperatorOptions,
  | 'kubeconfig'
  | 'context'
  | 'qps'
  | 'burst'
  | 'logLevel'
  | 'logFormat'
  | 'metricsBindAddress'
  | 'healthProbeBindAddress'
  | 'shutdownGracePeriod'
> &
  Partial<OperatorOptions> & {
    shard?: boolean
    clustersFile?: string
    webhookBindAddress?: string
    webhookCertDir?: string
  }

/** The Lease settings when `--leader-elect` is set; the Lease's namespace defaults to the config's. */
function leaderElection(o: RunValues, config: ClusterConfig): LeaderElectionOptions | undefined {
  if (!(o.leaderElect || o.shard) || !o.leaderElectionId) return undefined
  return {
    sharding: !!o.shard,
    name: o.leaderElectionId,
    namespace: o.leaderElectionNamespace || config.namespace,
    leaseDurationMs: o.leaderElectionLeaseDuration,
    renewDeadlineMs: o.leaderElectionRenewDeadline,
    retryPeriodMs: o.leaderElectionRetryPeriod,
  }
}

/** How {@link runOperatorWith} and {@link operatorCommand} run, besides the spec. */
export interface OperatorRunOptions {
  /** Put into the `starting` log line. */
  version?: string
  /**
   * Stops the operator. Default: the first SIGTERM or SIGINT (`onShutdownSignals`; a second one exits
   * at once). Pass one to embed the operator in a larger program, or in tests.
   */
  signal?: AbortSignal
  /** Releases the `--cache-dir` lock when the manager stops (set by {@link operatorCommand}'s precheck). */
  releaseCacheDir?: () => Promise<void>
}

/**
 * Runs `spec` with parsed flag values until a shutdown signal: the body of the `run` command.
 * Resolves with the exit code: 0 after a clean stop; 2 when it cannot start because of what it was
 * given (the cluster configuration, the clusters file, the logger, tracer or controllers function
 * throwing, a controller added twice, a watched CRD not installed), after one `<name> cannot start: …`
 * error line; 1 when the manager fails otherwise (a port in use, caches that never sync, leadership
 * lost). Does not reject.
 */
export async function runOperatorWith<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  values: FlagValues<F>,
  run: OperatorRunOptions = {},
): Promise<number> {
  const o = values as unknown as RunValues
  const flags = { level: o.logLevel, format: o.logFormat }
  let log = createLogger(flags)
  let partial: KubeClient | undefined
  let started: Started
  try {
    if (spec.logger) log = typeof spec.logger === 'function' ? spec.logger(flags) : spec.logger
    started = await startUp(spec, values, o, run, log, (c) => {
      partial = c
    })
  } catch (err) {
    // A mistake in what the operator was given (its configuration, its controllers): one line, exit 2,
    // before anything runs, so nothing is left behind to reject unhandled.
    await (partial as KubeClient | undefined)?.close()
    return cannotStart(spec, log, err)
  }
  const { manager, shutdown, context, config } = started
  const { client } = context
  try {
    const stopWebhooks =
      spec.webhooks &&
      o.webhookBindAddress &&
      (await startWebhooks(
        spec.webhooks,
        context,
        { bindAddress: o.webhookBindAddress, certDir: o.webhookCertDir, client, namespace: config.namespace },
        manager.registry,
        log,
      ))
    if (stopWebhooks) manager.onStop(stopWebhooks)
    await manager.run(shutdown)
    return 0
  } catch (err) {
    // A CRD is not installed: one line saying which, and how to install it.
    if (isEdgeopError(err, 'EDGEOP_ERR_DISCOVERY') && 'crds' in err) return cannotStart(spec, log, err)
    log.error(`${spec.name} stopped with an error`, {
      error: errorMessage(err),
      code: (err as { code?: string }).code,
    })
    return 1
  } finally {
    await client.close()
  }
}

/** What {@link startUp} built: the manager with the spec's controllers, ready to run. */
interface Started {
  manager: Manager
  shutdown: AbortSignal
  context: OperatorContext<FlagSet>
  config: ClusterConfig
}

/**
 * Builds everything `run` runs, from the flags: the configuration, the client (told to `created` at
 * once, to be closed on failure), the manager and the spec's controllers. Throws at the first mistake.
 */
async function startUp<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  values: FlagValues<F>,
  o: RunValues,
  run: OperatorRunOptions,
  log: Logger,
  created: (client: KubeClient) => void,
): Promise<Started> {
  const { version } = run
  const shutdown = run.signal ?? onShutdownSignals()
  const registry = new MetricsRegistry()
  // --tracing=otlp: reconciles and their requests as spans, configured by the OTEL_* variables.
  const tracer =
    o.tracing === 'otlp' ? otlpTracer(process.env, { name: spec.name, version }, registry, log) : undefined
  const config = await loadClusterConfig({
    kubeconfig: o.kubeconfig || undefined,
    context: o.context || undefined,
  })
  // A clusters file that cannot be read or parsed fails start-up here, before any connection.
  const members = o.clustersFile ? await readClustersFile(o.clustersFile) : undefined
  const observer = restClientMetrics(registry)
  const client = new KubeClient(config, { qps: o.qps, burst: o.burst, observer })
  created(client)
  log.info(`starting ${spec.name}`, {
    ...definedProps({ version }),
    cluster: config.source,
    ...spec.startFields?.(values),
  })
  const elect = leaderElection(o, config)
  const manager = new Manager({
    client,
    registry,
    logger: log,
    metricsBindAddress: o.metricsBindAddress,
    healthProbeBindAddress: o.healthProbeBindAddress,
    shutdownGracePeriodMs: o.shutdownGracePeriod,
    leaderElection: elect,
    tracer,
    // --namespace and --max-concurrent-reconciles reach every controller, not only the ones that read them.
    ...definedProps({ namespaces: o.namespace, maxConcurrentReconciles: o.maxConcurrentReconciles }),
    // --metrics-secure: HTTPS, every scrape authenticated (TokenReview) and authorized (SubjectAccessReview).
    ...(o.metricsSecure
      ? {
          secureMetrics: {
            certName: o.metricsCertName || undefined,
            keyName: o.metricsCertKey || undefined,
            certDir: o.metricsCertPath || undefined,
          },
        }
      : {}),
  })
  // --cache-dir: informers keep snapshots there (its lock was taken by the command's precheck).
  if (o.cacheDir) manager.factory.persistTo(o.cacheDir, { tag: version ?? spec.name })
  const recorder = new EventRecorder(client, {
    controller: spec.reportingController ?? spec.name,
    instance: spec.instance?.(values) ?? (process.env.HOSTNAME || spec.name),
    logger: log,
  })
  const file = o.clustersFile
  const clusters = file
    ? new ClusterSet({
        logger: log,
        connect: async (_, ref) =>
          new KubeClient(await loadClusterConfig(clusterRef(ref, dirname(file))), {
            qps: o.qps,
            burst: o.burst,
            observer,
          }),
      })
    : undefined
  const context = { options: values, client, config, manager, recorder, log, clusters }
  // One registration: a controller the spec's function already added (`addX(manager)` returning
  // manager.add's result) is not added again; any other controller of a name in use is refused by add.
  for (const c of spec.controllers(context)) if (!(c instanceof Controller && manager.has(c))) manager.add(c)
  if (clusters) {
    manager.readyz.add('clusters', clusters.check)
    clusters.metrics(registry)
    await clusters.update(members!)
    void followClustersFile(file!, clusters, log, shutdown)
    manager.onStop(() => clusters.update({}))
  }
  manager.onStop(() => recorder.flush())
  if (tracer) manager.onStop(() => tracer.shutdown())
  if (run.releaseCacheDir) manager.onStop(run.releaseCacheDir)
  return { manager, shutdown, context, config }
}

/** Logs why `spec` cannot start in one line (with its install hint when a CRD is missing) and returns {@link EXIT_USAGE}. */
function cannotStart<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  log: Logger,
  err: unknown,
): number {
  const crd = isEdgeopError(err, 'EDGEOP_ERR_DISCOVERY') && 'crds' in err && spec.installHint
  log.error(`${spec.name} cannot start: ${errorMessage(err)}${crd ? `. ${spec.installHint}` : ''}`, {
    code: (err as { code?: string }).code,
  })
  return EXIT_USAGE
}

/**
 * The `run` command for `spec`, to put into a `runCli` command table beside others (as the edgeop
 * binary does with `run` and `agent`).
 */
export function operatorCommand<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  run: OperatorRunOptions = {},
): Command<F> {
  const validate =
    spec.validate ??
    (spec.flags ? undefined : (validateOperatorOptions as (o: FlagValues<F>) => string | undefined))
  let releaseCacheDir: (() => Promise<void>) | undefined
  return defineCommand<F>({
    description: spec.description ?? `Run ${spec.name}`,
    flags: (spec.flags ?? OPERATOR_FLAGS) as F,
    validate,
    // The spec's own precheck, then the --cache-dir lock: a second process on one directory exits 2.
    precheck: async (o: FlagValues<F>) => {
      const problem = await spec.precheck?.(o)
      const dir = (o as { cacheDir?: string }).cacheDir
      if (problem !== undefined || !dir) return problem
      try {
        releaseCacheDir = await lockCacheDir(dir)
      } catch (err) {
        return errorMessage(err)
      }
      return undefined
    },
    run: (values) => runOperatorWith(spec, values, { ...run, ...definedProps({ releaseCacheDir }) }),
  })
}
