/**
 * @module sabotage — the deliberate breakages that show the soak notices: a database that ignores
 * idempotency (`duplicate-db`) and a fault left on after the chaos phase (`fault-left-on`).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FaultHandle } from '../controlplane/fault-proxy.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import type { SoakRun } from './context.ts'

/**
 * A front for the database stand-in that forgets an entry before every PUT, so the
 * stand-in creates it again: what a service that ignored idempotency keys would do.
 */
export async function forgetfulDatabase(
  db: DatabaseStandin,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const key = decodeURIComponent(/^\/v1\/databases\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '')
      if (req.method === 'PUT' && key) db.entries.delete(key)
      fetch(`${db.url}${req.url}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': 'application/json' },
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' })
          res.end(Buffer.from(await r.arrayBuffer()))
        })
        .catch(() => {
          res.writeHead(502)
          res.end()
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** With the `fault-left-on` sabotage: a 503 on every AppService status write, never cleared by the chaos phase. */
export function leaveFaultOn(ctx: SoakRun): FaultHandle | undefined {
  if (ctx.options.sabotage !== 'fault-left-on' || ctx.plane === undefined) return undefined
  const handle = ctx.plane.proxy.addFault({
    method: 'PATCH',
    path: /\/appservices\/[^/]+\/status$/,
    action: { type: 'status', status: 503 },
  })
  ctx.log('SABOTAGE: a 503 on every AppService status write stays on')
  return handle
}
