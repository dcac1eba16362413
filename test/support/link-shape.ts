/**
 * @module link-shape — slow links for the tests and the soak: named profiles, and a TCP forwarder
 * that delays every chunk by half the RTT in each direction and paces it to the bandwidth.
 *
 * The test kernel has no `sch_netem`, so `tc netem` cannot shape a link; the forwarder does it in
 * user space instead. Packet loss needs a network namespace (test/support/link-namespace.ts drops
 * packets with nftables there); a forwarder on loopback (the soak's `--link`) applies RTT and bandwidth only.
 */
import { connect, createServer, type Socket } from 'node:net'

/** A link's round-trip time (ms) and bandwidth (bit/s). */
export interface LinkShape {
  rttMs: number
  bitsPerSecond: number
}

/** The link profiles of docs/edge-networks.md, the ends of the ranges edge sites see; `loss` is a share (0–1). */
export const LINK_PROFILES: Record<string, LinkShape & { loss: number }> = {
  cellular: { rttMs: 300, bitsPerSecond: 2_000_000, loss: 0.01 },
  satellite: { rttMs: 800, bitsPerSecond: 256_000, loss: 0.05 },
}

/** Bytes a paced direction holds before pausing its sender: one second of a 2 Mbit/s link. */
const PACING_QUEUE_BYTES = 256 * 1024

/**
 * Copies `from` to `to` as over `shape`: each chunk leaves after its turn at the bandwidth plus half
 * the RTT, in the order it came, as TCP delivers it.
 *
 * One queue and one timer per direction, never one timer per chunk: a timer counts from a whole
 * millisecond while chunks on a busy link are due microseconds apart, so a later chunk's timer could
 * fire before an earlier one's. Reordered bytes broke TLS records on the lossy cellular link
 * (`ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC`, the connection failed and the client relisted):
 * a fault of the test's link, not of the network it stands for.
 */
export function paced(from: Socket, to: Socket, shape: LinkShape): void {
  const bytesPerMs = shape.bitsPerSecond / 8 / 1000
  let free = 0
  let queued = 0
  /** What is on the wire, oldest first; `undefined` is the sender's end. */
  const inFlight: { chunk: Buffer | undefined; dueAt: number }[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const schedule = () => {
    if (timer !== undefined || inFlight.length === 0) return
    timer = setTimeout(drain, Math.max(0, inFlight[0]!.dueAt - performance.now()))
  }
  const drain = () => {
    timer = undefined
    const now = performance.now()
    while (inFlight.length > 0 && inFlight[0]!.dueAt <= now) {
      const { chunk } = inFlight.shift()!
      if (chunk === undefined) {
        to.end()
        continue
      }
      if (!to.destroyed) to.write(chunk)
      queued -= chunk.length
    }
    if (queued <= PACING_QUEUE_BYTES / 2) from.resume()
    schedule()
  }
  from.on('data', (chunk: Buffer) => {
    free = Math.max(performance.now(), free) + chunk.length / bytesPerMs
    queued += chunk.length
    if (queued > PACING_QUEUE_BYTES) from.pause()
    inFlight.push({ chunk, dueAt: free + shape.rttMs / 2 })
    schedule()
  })
  from.on('end', () => {
    inFlight.push({ chunk: undefined, dueAt: Math.max(performance.now(), free) + shape.rttMs / 2 })
    schedule()
  })
}

/** Joins `client` and `upstream` over `shape` (both directions); either side failing ends both. */
export function joinShaped(client: Socket, upstream: Socket, shape: LinkShape): void {
  paced(client, upstream, shape)
  paced(upstream, client, shape)
  const end = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', end)
  upstream.on('error', end)
  // A close arrives before the chunks still in flight: let them land first.
  client.on('close', () => setTimeout(end, shape.rttMs + 100))
  upstream.on('close', () => setTimeout(end, shape.rttMs + 100))
}

/** A forwarder on 127.0.0.1 to `127.0.0.1:targetPort` over `shape`. */
export async function startShapedForwarder(
  targetPort: number,
  shape: LinkShape,
): Promise<{ port: number; close(): void }> {
  const open = new Set<Socket>()
  const server = createServer((client) => {
    open.add(client)
    client.on('close', () => open.delete(client))
    joinShaped(client, connect({ host: '127.0.0.1', port: targetPort }), shape)
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void server.once('listening', r))
  return {
    port: (server.address() as { port: number }).port,
    close() {
      server.close()
      for (const s of open) s.destroy()
    },
  }
}
