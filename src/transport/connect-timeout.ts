/**
 * @module connect-timeout — which step of opening a connection a connect timeout cut short, for both HTTP paths.
 *
 * One timer covers TCP connect and the TLS handshake (undici's connect timeout, and the same
 * timer in `http1-dispatcher.ts`); the error it produces has code `UND_ERR_CONNECT_TIMEOUT` on
 * both paths, and whoever raised it notes here whether the TCP connection had been established.
 */

/** The step of opening a connection that the connect timeout cut short. */
export type ConnectStep = 'connect' | 'tls-handshake'

/** Connect-timeout errors, with the step they interrupted and the limit. */
const timedOut = new WeakMap<object, { step: ConnectStep; timeoutMs: number }>()

/** Notes that `err` is a connect timeout of `timeoutMs` that interrupted `step`; returns `err`. */
export function noteConnectTimeout<E extends object>(err: E, step: ConnectStep, timeoutMs: number): E {
  timedOut.set(err, { step, timeoutMs })
  return err
}

/** For an error noted by {@link noteConnectTimeout}: the step it interrupted and the limit; else undefined. */
export function connectTimeoutStep(err: unknown): { step: ConnectStep; timeoutMs: number } | undefined {
  return typeof err === 'object' && err !== null ? timedOut.get(err) : undefined
}
