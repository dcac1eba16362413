/**
 * @module proxy-failure — the error for a connection a proxy did not open, naming the proxy without its credentials.
 *
 * Opening a tunnel can fail at the proxy (refused, a CONNECT answered 407, a SOCKS5 reply) or on
 * the way to it (ECONNREFUSED, a reset). Either way the request's error names the proxy as
 * `scheme://host:port` (never the user info of its URL) and keeps the underlying error's `code`,
 * so a reset on the way to the proxy is retried like any lost connection.
 */

/** Errors raised while opening a tunnel, with the proxy they went through and what failed. */
const failures = new WeakMap<object, { proxy: string; detail: string }>()

/** A new error: the proxy `display` (no credentials) did not open the tunnel, for `detail`. */
export function proxyFailure(display: string, detail: string, code?: string): Error {
  const err = Object.assign(new Error(`proxy ${display}: ${detail}`), { code: code ?? 'EDGEOP_PROXY_FAILED' })
  failures.set(err, { proxy: display, detail })
  return err
}

/** `err` (a failure on the way to the proxy `display`) as a proxy failure keeping its `code`; never its message, which may quote a URL. */
export function asProxyFailure(err: unknown, display: string): Error {
  if (typeof err === 'object' && err !== null && failures.has(err)) return err as Error
  const code = (err as { code?: unknown })?.code
  const known = typeof code === 'string' ? code : undefined
  return proxyFailure(display, known ?? 'the connection to the proxy failed', known)
}

/** For an error made here: the proxy and what failed; else undefined. */
export function proxyFailureOf(err: unknown): { proxy: string; detail: string } | undefined {
  return typeof err === 'object' && err !== null ? failures.get(err) : undefined
}
