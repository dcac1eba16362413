/**
 * @module load — finds the cluster configuration the way controller-runtime `config.GetConfig` does.
 *
 * Precedence: the explicit `kubeconfig` option → the `KUBECONFIG` list → in-cluster
 * (when `KUBERNETES_SERVICE_HOST`/`_PORT` are set) → `~/.kube/config`.
 */
import { stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import path from 'node:path'
import type { Clock } from '../core/clock.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import type { ClusterConfig } from './cluster-config.ts'
import { type InClusterOptions, isInCluster, loadInClusterConfig } from './in-cluster.ts'
import { type KubeconfigBuildOptions, loadKubeconfig } from './kubeconfig.ts'
import type { ReadTextFile } from './read-text-file.ts'

/** The kubeconfig read when nothing else applies, relative to the home directory (client-go `clientcmd.RecommendedHomeFile`). */
export const RECOMMENDED_HOME_KUBECONFIG = path.join('.kube', 'config')

/** Options for {@link loadClusterConfig}. */
export interface LoadClusterConfigOptions {
  /** Explicit kubeconfig path (like `--kubeconfig`); it must exist. */
  kubeconfig?: string
  /** Context to use instead of `current-context` (kubeconfig only). */
  context?: string
  /** Overrides the namespace of the context or pod. */
  namespace?: string
  /** Environment (`KUBECONFIG`, `KUBERNETES_SERVICE_*`, `HOME`, exec plugin parent env). Default `process.env`. */
  env?: Record<string, string | undefined>
  /** Home directory for `~/.kube/config`. Default `env.HOME`, else `os.homedir()`. */
  homeDir?: string
  /** Ages cached token-file tokens and exec credentials. Default `realClock`. */
  clock?: Clock
  /** Receives the in-cluster → home-kubeconfig fallback, CA fallback and token re-read messages; never a secret. Default {@link noopLogger} (silent). */
  logger?: Logger
  /** Test seams. */
  readFile?: ReadTextFile
  /** Test seam: service-account file paths for in-cluster loading (defaults: the files in `SERVICE_ACCOUNT_DIR`). */
  inCluster?: Pick<InClusterOptions, 'tokenFile' | 'caFile' | 'namespaceFile'>
  /** Test seam: how exec plugins are started and whether stdin counts as a terminal. */
  exec?: Pick<KubeconfigBuildOptions, 'execRunner' | 'stdinIsTTY'>
}

/**
 * Loads the {@link ClusterConfig} to use, by controller-runtime precedence. When in-cluster
 * loading fails and `~/.kube/config` exists, the failure is logged and the file is used
 * (controller-runtime does the same).
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` / `EDGEOP_ERR_YAML` with the file, context and field at fault.
 */
export async function loadClusterConfig(options: LoadClusterConfigOptions = {}): Promise<ClusterConfig> {
  const env = options.env ?? process.env
  const logger = options.logger ?? noopLogger
  // Only an injected reader is passed on: without one, each file is read by the bounded reader with
  // its own cap (a kubeconfig through readKubeconfigText's, UTF-8 checked at line and column).
  const readFile = options.readFile
  const shared = {
    env,
    logger,
    readFile,
    clock: options.clock,
    ...options.exec,
  }
  const kubeconfig = (paths: string[], missingOk: boolean) =>
    loadKubeconfig({ ...shared, paths, missingOk, context: options.context || undefined })
  const home = path.join(options.homeDir ?? (env.HOME || homedir()), RECOMMENDED_HOME_KUBECONFIG)
  let config: ClusterConfig
  if (options.kubeconfig) config = await kubeconfig([options.kubeconfig], false)
  else if (env.KUBECONFIG) config = await kubeconfig(env.KUBECONFIG.split(path.delimiter), true)
  else if (isInCluster(env)) {
    try {
      config = await loadInClusterConfig({ ...shared, ...options.inCluster })
    } catch (err) {
      if (!(await exists(readFile, home))) throw err
      logger.error('in-cluster config failed; using the home kubeconfig', {
        path: home,
        error: errorMessage(err),
      })
      config = await kubeconfig([home], false)
    }
  } else if (await exists(readFile, home)) config = await kubeconfig([home], false)
  else {
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `no cluster configuration found: no kubeconfig option, KUBECONFIG is not set, not running in a cluster ` +
        `(KUBERNETES_SERVICE_HOST/PORT are not set), and ${home} does not exist`,
      { step: 'load cluster config' },
    )
  }
  if (options.namespace) config.namespace = options.namespace
  return config
}

/** Whether `file` exists (with an injected reader: whether it reads); never reads a real file, which may be a FIFO. */
async function exists(readFile: ReadTextFile | undefined, file: string): Promise<boolean> {
  try {
    await (readFile ? readFile(file) : stat(file))
    return true
  } catch (err) {
    return (err as { code?: unknown }).code !== 'ENOENT'
  }
}
