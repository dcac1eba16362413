/**
 * @module tcp-states — how many client connections to a local port are in each TCP state, read from
 * /proc/net/tcp and tcp6 (what `ss -tan dport = :<port>` counts, without needing `ss`).
 *
 * The fleet benchmark prints it beside each agent process's progress: a stall whose connections sit
 * in CLOSE-WAIT (the server closed, the client has not) is told apart from one still connecting.
 */
import { readFile } from 'node:fs/promises'

/** The kernel's TCP state numbers (include/net/tcp_states.h). */
const STATES: Record<number, string> = {
  1: 'ESTABLISHED',
  2: 'SYN-SENT',
  3: 'SYN-RECV',
  4: 'FIN-WAIT-1',
  5: 'FIN-WAIT-2',
  6: 'TIME-WAIT',
  7: 'CLOSE',
  8: 'CLOSE-WAIT',
  9: 'LAST-ACK',
  10: 'LISTEN',
  11: 'CLOSING',
}

/** Counts the lines of /proc/net/tcp-format `text` whose remote port is `port`, by state. */
export function countTcpStates(text: string, port: number): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/)
    if (f.length < 4) continue
    const remotePort = Number.parseInt(f[2]!.split(':')[1] ?? '', 16)
    if (remotePort !== port) continue
    const state = STATES[Number.parseInt(f[3]!, 16)] ?? `state ${f[3]}`
    counts[state] = (counts[state] ?? 0) + 1
  }
  return counts
}

/** The client connections to local `port`, by TCP state, over IPv4 and IPv6. */
export async function tcpStates(port: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '')
    for (const [k, v] of Object.entries(countTcpStates(text, port))) counts[k] = (counts[k] ?? 0) + v
  }
  return counts
}
