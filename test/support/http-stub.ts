/**
 * @module http-stub — a scripted loopback HTTP server for narrow transport unit tests.
 * Integration tests use the real kube-apiserver instead (test/controlplane).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the stub saw. */
export interface SeenRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** A handler decides the response for the n-th request (0-based). */
export type StubHandler = (req: SeenRequest, res: ServerResponse, n: number) => void

/** Starts a stub on 127.0.0.1:0; `close()` destroys open sockets too. */
export async function startStub(
  handler: StubHandler,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const s = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      }
      seen.push(s)
      handler(s, res, seen.length - 1)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Writes a JSON response. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** Waits (yielding to the event loop, no timers) until `cond` holds; fails after `turns`. */
export async function until(cond: () => boolean, turns = 5000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return
    await new Promise((r) => setImmediate(r))
  }
  throw new Error('condition not reached')
}
