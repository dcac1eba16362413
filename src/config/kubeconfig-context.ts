/**
 * @module kubeconfig-context — resolves one context of merged kubeconfigs into connection settings, without I/O.
 */
import { EdgeopError } from '../core/errors.ts'
import { quoteInput, quoteInputs } from '../core/quote-input.ts'
import { decodeBase64, type KubeconfigSet } from './kubeconfig-files.ts'
import type { KubeconfigExec } from './kubeconfig-schema.ts'

/** Name of the cluster extension client-go passes to exec plugins as `spec.cluster.config` (client-go `clientcmd/api/v1`). */
export const EXEC_CLUSTER_EXTENSION = 'client.authentication.k8s.io/exec'

/** An exec plugin section as written in the kubeconfig (paths already resolved). */
export interface ExecSection {
  /** `exec.command`, absolute when it contains a path separator; `''` when unset (refused when the provider is built). */
  command: string
  /** `exec.args`; a null entry becomes `''`. */
  args: string[]
  /** `exec.env`; every entry has a name (else resolution throws `EDGEOP_ERR_CONFIG`), a null value becomes `''`. */
  env: { name: string; value: string }[]
  /** `exec.apiVersion`; `''` when unset (refused when the provider is built). */
  apiVersion: string
  /** `exec.installHint`; undefined when unset or empty. */
  installHint: string | undefined
  /** `exec.provideClusterInfo`; false when unset. */
  provideClusterInfo: boolean
  /** As written; validated when the provider is built. */
  interactiveMode: string | undefined
}

/** How the user authenticates. Client certificates are TLS settings and appear in {@link ResolvedContext}. */
export type ResolvedAuth =
  | { kind: 'none' }
  | { kind: 'token'; token: string }
  | { kind: 'token-file'; path: string; token: string | undefined }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'exec'; exec: ExecSection }

/** A context resolved from a kubeconfig: names, server, TLS sources and auth, before any file is read. */
export interface ResolvedContext {
  /** The context used: the `contextName` argument, else the merged `current-context`. */
  contextName: string
  /** The kubeconfig file that defined the context. */
  contextFile: string
  /** All kubeconfig files that were merged. */
  files: string[]
  /** The cluster the context names; it exists in the merged files. */
  clusterName: string
  /** Undefined when the context names no user (anonymous). */
  userName: string | undefined
  /** The kubeconfig file that defined the user. */
  userFile: string | undefined
  /** Absolute URL without trailing slash; `https://` is added to a bare host when TLS settings exist, else `http://` (client-go `DefaultServerURL`). */
  server: string
  /** Undefined when the context sets none. */
  namespace: string | undefined
  /** `certificate-authority`, absolute; never set together with {@link ResolvedContext.caData}. */
  caFile: string | undefined
  /** Decoded `certificate-authority-data`. */
  caData: string | undefined
  /** `client-certificate`, absolute. A certificate (file or data) is always paired with a key. */
  certFile: string | undefined
  /** Decoded `client-certificate-data` (PEM). */
  certData: string | undefined
  /** `client-key`, absolute. */
  keyFile: string | undefined
  /** Decoded `client-key-data` (PEM). Secret. */
  keyData: string | undefined
  /** `tls-server-name`; undefined when unset or empty. */
  tlsServerName: string | undefined
  /** `insecure-skip-tls-verify`; false when unset. */
  insecureSkipVerify: boolean
  /** `proxy-url`; undefined when unset. The client transport connects through it, as client-go does. */
  proxyUrl: string | undefined
  /** `disable-compression`; false when unset. Only passed on to exec plugins (edgeop never asks for compression). */
  disableCompression: boolean
  /** The one method used: `tokenFile` (with `token` as fallback), else `token`, else `username`, else `exec` when there is no client certificate. */
  auth: ResolvedAuth
  /** The cluster's `client.authentication.k8s.io/exec` extension, if any. */
  execExtension: unknown
}

function configError(message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_CONFIG', message, { step: 'resolve kubeconfig context' })
}

function list(names: Iterable<string>): string {
  return quoteInputs([...names].filter((n) => n !== ''))
}

/**
 * Resolves `contextName` (default: the merged `current-context`) into connection settings.
 * Applies client-go's validation: a file field and its `-data` form may not both be set;
 * a client certificate needs its key; token and basic auth exclude each other;
 * an exec plugin is ignored when token, basic or certificate auth is present. Refuses what
 * edgeop cannot honour (auth-provider, impersonation) rather than silently dropping it.
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` naming the file, the context and the field.
 */
export function resolveContext(set: KubeconfigSet, contextName?: string): ResolvedContext {
  const files = set.files.join(', ')
  const name = contextName || set.currentContext?.name
  if (!name) {
    throw configError(
      `current-context is not set in ${files}; choose a context with the "context" option or ` +
        `"kubectl config use-context <name>" (contexts: ${list(set.contexts.keys())})`,
    )
  }
  const context = set.contexts.get(name)
  if (!context)
    throw configError(
      `context ${quoteInput(name)} not found in ${files} (contexts: ${list(set.contexts.keys())})`,
    )
  const ctx = context.value
  const where = `context ${quoteInput(name)} in ${context.file}`
  if (!ctx.cluster) throw configError(`${where} names no cluster`)
  const cluster = set.clusters.get(ctx.cluster)
  if (!cluster) throw configError(`cluster ${quoteInput(ctx.cluster)} (${where}) not found in ${files}`)
  const c = cluster.value
  const cWhere = `cluster ${quoteInput(cluster.name)} in ${cluster.file}`
  const user = ctx.user ? set.users.get(ctx.user) : undefined
  if (ctx.user && !user) throw configError(`user ${quoteInput(ctx.user)} (${where}) not found in ${files}`)
  const u = user?.value ?? {}
  const uWhere = `user ${quoteInput(user?.name ?? '')} in ${user?.file}`
  const both = (what: string, a: unknown, b: unknown, w: string): void => {
    if (a && b) throw configError(`${w} sets both ${what} and ${what}-data; keep one`)
  }
  both('certificate-authority', c['certificate-authority'], c['certificate-authority-data'], cWhere)
  both('client-certificate', u['client-certificate'], u['client-certificate-data'], uWhere)
  both('client-key', u['client-key'], u['client-key-data'], uWhere)
  const hasCert = Boolean(u['client-certificate'] || u['client-certificate-data'])
  const hasKey = Boolean(u['client-key'] || u['client-key-data'])
  if (hasCert !== hasKey) {
    throw configError(
      `${uWhere} has ${hasCert ? 'a client certificate but no client key' : 'a client key but no client certificate'}; set both or neither`,
    )
  }
  if (u['auth-provider']) {
    throw configError(
      `${uWhere} uses auth-provider ${quoteInput(u['auth-provider'].name ?? '')}, which edgeop does not support; use an exec plugin (for example kubelogin) instead`,
    )
  }
  if (u.as || u['as-uid'] || u['as-groups']?.length || Object.keys(u['as-user-extra'] ?? {}).length) {
    throw configError(
      `${uWhere} sets impersonation (as, as-uid, as-groups or as-user-extra), which edgeop does not support`,
    )
  }
  if (u.token && (u.username || u.password)) {
    throw configError(
      `${uWhere} sets more than one authentication method (token and username/password); only one is allowed`,
    )
  }
  if (u.password && !u.username) throw configError(`${uWhere} sets a password but no username`)
  const caData = c['certificate-authority-data'] ? decodeBase64(c['certificate-authority-data']) : undefined
  const insecure = c['insecure-skip-tls-verify'] ?? false
  const tlsServerName = c['tls-server-name'] || undefined
  const tls = Boolean(caData || c['certificate-authority'] || hasCert || insecure || tlsServerName)
  let auth: ResolvedAuth = { kind: 'none' }
  if (u.tokenFile) auth = { kind: 'token-file', path: u.tokenFile, token: u.token || undefined }
  else if (u.token) auth = { kind: 'token', token: u.token }
  else if (u.username) auth = { kind: 'basic', username: u.username, password: u.password ?? '' }
  else if (u.exec && !hasCert) auth = { kind: 'exec', exec: execSection(u.exec, uWhere) }
  return {
    contextName: name,
    contextFile: context.file,
    files: set.files,
    clusterName: cluster.name,
    userName: user?.name,
    userFile: user?.file,
    server: serverUrl(c.server, tls, cWhere),
    namespace: ctx.namespace || undefined,
    caFile: c['certificate-authority'] || undefined,
    caData,
    certFile: u['client-certificate'] || undefined,
    certData: u['client-certificate-data'] ? decodeBase64(u['client-certificate-data']) : undefined,
    keyFile: u['client-key'] || undefined,
    keyData: u['client-key-data'] ? decodeBase64(u['client-key-data']) : undefined,
    tlsServerName,
    insecureSkipVerify: insecure,
    proxyUrl: c['proxy-url'] || undefined,
    disableCompression: c['disable-compression'] ?? false,
    auth,
    execExtension: c.extensions?.find((e) => e?.name === EXEC_CLUSTER_EXTENSION)?.extension,
  }
}

function execSection(exec: KubeconfigExec, where: string): ExecSection {
  const env = (exec.env ?? []).map((e, i) => {
    if (!e?.name) throw configError(`${where}: exec.env[${i}] has no name`)
    return { name: e.name, value: e.value ?? '' }
  })
  return {
    command: exec.command ?? '',
    args: (exec.args ?? []).map((a) => a ?? ''),
    env,
    apiVersion: exec.apiVersion ?? '',
    installHint: exec.installHint || undefined,
    provideClusterInfo: exec.provideClusterInfo ?? false,
    interactiveMode: exec.interactiveMode || undefined,
  }
}

/** Validates `server` and gives a bare `host:port` a scheme, as client-go `rest.DefaultServerURL` does. */
function serverUrl(server: string | null | undefined, tls: boolean, where: string): string {
  if (!server) throw configError(`${where} has no server`)
  const full = server.includes('://') ? server : `${tls ? 'https' : 'http'}://${server}`
  let url: URL
  try {
    url = new URL(full)
  } catch {
    throw configError(
      `${where}: server is not a valid URL (an IPv6 address must be in brackets, e.g. https://[::1]:6443)`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw configError(`${where}: server must be an http or https URL`)
  if (url.username || url.password)
    throw configError(`${where}: server must not contain a user name or password`)
  return full.replace(/\/+$/, '')
}
