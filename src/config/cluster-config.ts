/**
 * @module cluster-config — what a loaded kubeconfig or in-cluster environment resolves to.
 *
 * This is the contract between `config` (which reads files and environment) and
 * `client` (which opens connections). Secrets live only in the fields marked
 * secret; nothing here is ever logged or put into an error message.
 */

/** Credentials to present on a request. At most one of token / certificate is set. */
export interface Credentials {
  /** Bearer token. Secret. */
  token?: string
  /** Client certificate PEM (from an exec plugin). */
  clientCertificate?: string
  /** Client key PEM (from an exec plugin). Secret. */
  clientKey?: string
  /** Basic-auth user and password. Secret. */
  basic?: { username: string; password: string }
  /** When these credentials stop being valid (ms since epoch); undefined = no expiry. */
  expiresAt?: number
}

/**
 * A source of credentials, asked before every request.
 *
 * Guarantees of every implementation: concurrent `get` calls share one underlying
 * refresh (one exec-plugin run, one file read); `get` resolves quickly from a cache
 * while the cached value is valid.
 */
export interface CredentialProvider {
  /** A short description for errors and logs, never containing a secret (e.g. `exec plugin "aws"`). */
  readonly describe: string
  /** Current credentials. */
  get(signal?: AbortSignal): Promise<Credentials>
  /**
   * Tells the provider that the server answered 401 to a request made with `used`.
   * Returns true when fresh credentials may now differ (the caller retries once).
   */
  invalidate?(used: Credentials): boolean
}

/** TLS settings for the connection to the API server. PEM strings. */
export interface TlsConfig {
  /** CA bundle PEM; undefined = the system roots. */
  ca?: string
  /** Static client certificate PEM. */
  cert?: string
  /** Static client key PEM. Secret. */
  key?: string
  /** SNI / verification name (`tls-server-name`). */
  serverName?: string
  /** Skip server verification (`insecure-skip-tls-verify`). */
  insecureSkipVerify: boolean
}

/** A fully resolved cluster connection. */
export interface ClusterConfig {
  /** API server base URL, e.g. `https://127.0.0.1:6443` (may carry a path prefix). */
  server: string
  /** How the server is verified and which static client certificate is presented. */
  tls: TlsConfig
  /** Undefined = anonymous. */
  credentials?: CredentialProvider
  /** Namespace of the context, or of the service account in-cluster; `'default'` when unset. */
  namespace: string
  /** Where this came from, for messages: `kubeconfig /path (context "x")` or `in-cluster`. */
  source: string
  /** Name of the context used (kubeconfig only). */
  contextName?: string
  /** `proxy-url` of the cluster, if any. */
  proxyUrl?: string
}
