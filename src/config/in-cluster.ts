/**
 * @module in-cluster — the ClusterConfig of a pod: API address from the environment, service-account token, CA and namespace.
 *
 * Mirrors client-go `rest.InClusterConfig` (and controller-runtime's namespace lookup).
 */
import { type Clock, realClock } from '../core/clock.ts'
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import type { ClusterConfig } from './cluster-config.ts'
import { DEFAULT_NAMESPACE } from './namespace.ts'
import { MAX_PEM_FILE_BYTES, type ReadTextFile, readTextFile } from './read-text-file.ts'
import { TokenFileProvider } from './token-file.ts'

/** Where the kubelet mounts the service-account volume (client-go `rest.InClusterConfig`). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'
/** The bound service-account token; it rotates, so it is re-read (see {@link TokenFileProvider}). */
export const IN_CLUSTER_TOKEN_FILE = `${SERVICE_ACCOUNT_DIR}/token`
/** The cluster CA bundle. */
export const IN_CLUSTER_CA_FILE = `${SERVICE_ACCOUNT_DIR}/ca.crt`
/** The pod's namespace (controller-runtime `leaderelection` reads the same file). */
export const IN_CLUSTER_NAMESPACE_FILE = `${SERVICE_ACCOUNT_DIR}/namespace`

/** The namespace file holds one name (at most 63 characters); 4 KiB leaves room for blanks and no room for anything else. */
const NAMESPACE_FILE_LIMITS = { what: 'namespace file', maxBytes: 4096 }

/** Options for {@link loadInClusterConfig}; every path and the environment are injectable. */
export interface InClusterOptions {
  /** Default `process.env`. */
  env?: Record<string, string | undefined>
  /** Bearer token file; must be readable at load time, then re-read as it rotates. Default {@link IN_CLUSTER_TOKEN_FILE}. */
  tokenFile?: string
  /** CA bundle; when unreadable or not PEM, an error is logged and the system roots are used. Default {@link IN_CLUSTER_CA_FILE}. */
  caFile?: string
  /** Namespace file; missing or blank means {@link DEFAULT_NAMESPACE}. Default {@link IN_CLUSTER_NAMESPACE_FILE}. */
  namespaceFile?: string
  /** Ages the cached token (see {@link TokenFileProvider}). Default {@link realClock}. */
  clock?: Clock
  /** Receives the CA fallback error and token re-read warnings; never a secret. Default {@link noopLogger} (silent). */
  logger?: Logger
  /** Reads the token, CA and namespace files. Default {@link readTextFile} (bounded). */
  readFile?: ReadTextFile
}

/** True when both `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are set (client-go's test). */
export function isInCluster(env: Record<string, string | undefined> = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT)
}

/**
 * Builds the in-cluster configuration: `https://host:port` (an IPv6 host in brackets),
 * credentials from the token file (read now, so an unreadable token fails here, then
 * re-read as it rotates), the CA file (when missing or not PEM: logged, and TLS uses the
 * system roots, as client-go does) and the namespace file (`default` when absent).
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` when not in a cluster or the token cannot be read.
 */
export async function loadInClusterConfig(options: InClusterOptions = {}): Promise<ClusterConfig> {
  const env = options.env ?? process.env
  const logger = options.logger ?? noopLogger
  const read = options.readFile ?? readTextFile
  const host = env.KUBERNETES_SERVICE_HOST
  const port = env.KUBERNETES_SERVICE_PORT
  const step = 'load in-cluster config'
  if (!host || !port) {
    const missing = [host ? '' : 'KUBERNETES_SERVICE_HOST', port ? '' : 'KUBERNETES_SERVICE_PORT'].filter(
      Boolean,
    )
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `not running in a cluster: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set (both are required)`,
      { step },
    )
  }
  const credentials = new TokenFileProvider({
    path: options.tokenFile ?? IN_CLUSTER_TOKEN_FILE,
    clock: options.clock ?? realClock,
    logger,
    readFile: read,
  })
  try {
    await credentials.get()
  } catch (err) {
    throw new EdgeopError('EDGEOP_ERR_CONFIG', `in-cluster config: ${(err as Error).message}`, {
      step,
      cause: err,
    })
  }
  const caFile = options.caFile ?? IN_CLUSTER_CA_FILE
  let ca: string | undefined
  try {
    ca = await read(caFile, { what: 'in-cluster CA file', maxBytes: MAX_PEM_FILE_BYTES })
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate in the file')
  } catch (err) {
    ca = undefined
    logger.error('cannot load the in-cluster CA; using the system roots', {
      path: caFile,
      error: (err as Error).message,
    })
  }
  let namespace = DEFAULT_NAMESPACE
  try {
    const file = options.namespaceFile ?? IN_CLUSTER_NAMESPACE_FILE
    namespace = (await read(file, NAMESPACE_FILE_LIMITS)).trim() || DEFAULT_NAMESPACE
  } catch {
    // No namespace file: keep the default.
  }
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return {
    server: `https://${bracketed}:${port}`,
    tls: { ...definedProps({ ca }), insecureSkipVerify: false },
    credentials,
    namespace,
    source: 'in-cluster',
  }
}
