/**
 * @module kubeconfig — loads kubeconfig files into a ClusterConfig: merge, resolve a context, read PEM files, build credentials.
 */
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { quoteInput } from '../core/quote-input.ts'
import type { ClusterConfig, CredentialProvider } from './cluster-config.ts'
import { ExecCredentialProvider } from './exec-credentials.ts'
import type { ExecRunner } from './exec-plugin-runner.ts'
import { type ResolvedContext, resolveContext } from './kubeconfig-context.ts'
import { mergeKubeconfigs, readKubeconfigFiles } from './kubeconfig-files.ts'
import { DEFAULT_NAMESPACE } from './namespace.ts'
import { MAX_PEM_FILE_BYTES, type ReadTextFile, readTextFile } from './read-text-file.ts'
import { basicAuthProvider, staticTokenProvider } from './static-credentials.ts'
import { TokenFileProvider } from './token-file.ts'

/** How to build credentials and read files; shared by {@link loadKubeconfig} and {@link buildClusterConfig}. */
export interface KubeconfigBuildOptions {
  /** Ages cached token-file tokens and exec credentials. Default {@link realClock}. */
  clock?: Clock
  /** Receives token-file rotation warnings. Never receives a secret. */
  logger?: Logger
  /** Reads PEM and token files (and, in {@link loadKubeconfig}, the kubeconfig files). Default {@link readTextFile} (bounded). */
  readFile?: ReadTextFile
  /** Parent environment of exec plugins. Default `process.env`. */
  env?: Record<string, string | undefined>
  /** Starts exec plugins. Default: `child_process.spawn`. */
  execRunner?: ExecRunner
  /** Whether stdin is a terminal (exec `interactiveMode`). Default `process.stdin.isTTY`. */
  stdinIsTTY?: boolean
}

/** Options for {@link loadKubeconfig}. */
export interface KubeconfigOptions extends KubeconfigBuildOptions {
  /** Kubeconfig files in precedence order (the first to define a name wins). */
  paths: readonly string[]
  /** Skip files that do not exist (the `KUBECONFIG` list). Default false: a missing file is an error. */
  missingOk?: boolean
  /** Context to use instead of `current-context`. */
  context?: string
}

function configError(message: string, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_CONFIG', message, { step: 'load kubeconfig', cause })
}

/**
 * Reads, merges and resolves kubeconfig files into a {@link ClusterConfig}. When every file
 * read is empty (blanks and comments only), that is the error, naming the files.
 *
 * @throws EdgeopError `EDGEOP_ERR_YAML` / `EDGEOP_ERR_CONFIG` naming the file, context and field.
 */
export async function loadKubeconfig(options: KubeconfigOptions): Promise<ClusterConfig> {
  const files = await readKubeconfigFiles(options.paths, options)
  if (files.length === 0)
    throw configError(`none of the kubeconfig files exist: ${options.paths.filter(Boolean).join(', ')}`)
  if (files.every((f) => f.empty)) {
    const names = files.map((f) => f.file)
    throw configError(
      `${names.length === 1 ? `kubeconfig ${names[0]} is` : `kubeconfig files ${names.join(', ')} are`} empty ` +
        '(nothing but blanks and comments); write a kubeconfig there or point to another file',
    )
  }
  return buildClusterConfig(resolveContext(mergeKubeconfigs(files), options.context), options)
}

/**
 * Turns a resolved context into a {@link ClusterConfig}: reads the CA, client certificate
 * and key files (`*-data` fields are used as they are), reads a `tokenFile` once so that an
 * unreadable one fails now, and validates an exec section (the plugin runs on first use).
 */
export async function buildClusterConfig(
  r: ResolvedContext,
  options: KubeconfigBuildOptions = {},
): Promise<ClusterConfig> {
  const read = options.readFile ?? readTextFile
  const inContext = `(context ${quoteInput(r.contextName)})`
  const pem = async (file: string | undefined, data: string | undefined, field: string, owner: string) => {
    if (data !== undefined || file === undefined) return data
    try {
      return await read(file, { what: field, maxBytes: MAX_PEM_FILE_BYTES })
    } catch (err) {
      if (isEdgeopError(err, 'EDGEOP_ERR_FILE'))
        throw configError(`${err.message} (${owner} ${inContext})`, err)
      const code = String((err as { code?: unknown }).code ?? err)
      throw configError(`cannot read ${field} ${file} of ${owner} ${inContext}: ${code}`, err)
    }
  }
  const ca = await pem(r.caFile, r.caData, 'certificate-authority', `cluster ${quoteInput(r.clusterName)}`)
  const cert = await pem(r.certFile, r.certData, 'client-certificate', `user ${quoteInput(r.userName ?? '')}`)
  const key = await pem(r.keyFile, r.keyData, 'client-key', `user ${quoteInput(r.userName ?? '')}`)
  const config: ClusterConfig = {
    server: r.server,
    tls: { insecureSkipVerify: r.insecureSkipVerify },
    namespace: r.namespace ?? DEFAULT_NAMESPACE,
    source: `kubeconfig ${r.contextFile} ${inContext}`,
    contextName: r.contextName,
  }
  if (ca !== undefined) config.tls.ca = ca
  if (cert !== undefined) config.tls.cert = cert
  if (key !== undefined) config.tls.key = key
  if (r.tlsServerName !== undefined) config.tls.serverName = r.tlsServerName
  if (r.proxyUrl !== undefined) config.proxyUrl = r.proxyUrl
  const credentials = await credentialsFor(r, ca, options)
  if (credentials) config.credentials = credentials
  return config
}

async function credentialsFor(
  r: ResolvedContext,
  ca: string | undefined,
  options: KubeconfigBuildOptions,
): Promise<CredentialProvider | undefined> {
  const owner = `user ${quoteInput(r.userName ?? '')}`
  const where = `(kubeconfig ${r.userFile}, context ${quoteInput(r.contextName)})`
  const auth = r.auth
  switch (auth.kind) {
    case 'none':
      return undefined
    case 'token':
      return staticTokenProvider(auth.token, owner)
    case 'basic':
      return basicAuthProvider(auth.username, auth.password, owner)
    case 'token-file': {
      const provider = new TokenFileProvider({
        path: auth.path,
        clock: options.clock ?? realClock,
        logger: options.logger ?? noopLogger,
        readFile: options.readFile ?? readTextFile,
        fallbackToken: auth.token,
      })
      try {
        await provider.get()
      } catch (err) {
        throw configError(`${owner} ${where}: ${(err as Error).message}`, err)
      }
      return provider
    }
    case 'exec': {
      const info = {
        server: r.server,
        'tls-server-name': r.tlsServerName,
        'insecure-skip-tls-verify': r.insecureSkipVerify || undefined,
        'certificate-authority-data': ca === undefined ? undefined : Buffer.from(ca).toString('base64'),
        'proxy-url': r.proxyUrl,
        'disable-compression': r.disableCompression || undefined,
        config: r.execExtension,
      }
      try {
        return new ExecCredentialProvider({
          exec: auth.exec,
          user: r.userName ?? '',
          cluster: info,
          clock: options.clock ?? realClock,
          env: options.env ?? process.env,
          stdinIsTTY: options.stdinIsTTY,
          run: options.execRunner,
        })
      } catch (err) {
        throw new EdgeopError('EDGEOP_ERR_CONFIG', `${(err as Error).message} ${where}`, {
          step: 'load kubeconfig',
        })
      }
    }
  }
}
