/**
 * @module tcp-table — the kernel's TCP socket tables (/proc/net/tcp and tcp6), read without `ss`:
 * each row's ports, state and inode, the listening sockets (process-tree.ts finds whose they are),
 * and how many client connections to a port are in each state (`ss -tan dport = :<port>`).
 *
 * The fleet benchmark prints the states beside each agent process's progress: a stall whose
 * connections sit in CLOSE-WAIT (the server closed, the client has not) is told apart from one still
 * connecting.
 */
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'

/** The two tables, IPv4 and IPv6. */
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'] as const

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
/** TCP_LISTEN's number. */
const LISTEN = 10

/** One socket of a table. */
export interface TcpRow {
  localPort: number
  remotePort: number
  /** The kernel's state number (see {@link STATES}). */
  state: number
  inode: string
}

/** The rows of /proc/net/tcp-format `text` (its header line skipped). */
export function tcpTableRows(text: string): TcpRow[] {
  const port = (address: string) => Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16)
  const rows: TcpRow[] = []
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const cols = line.trim().split(/\s+/)
    if (cols.length < 10) continue
    rows.push({
      localPort: port(cols[1]!),
      remotePort: port(cols[2]!),
      state: Number.parseInt(cols[3]!, 16),
      inode: cols[9]!,
    })
  }
  return rows
}

/** One TCP listening socket. */
export interface ListeningSocket {
  port: number
  /** The socket's inode (the link target of a `/proc/<pid>/fd` entry is `socket:[inode]`). */
  inode: string
}

/** Every TCP socket in state LISTEN on this machine (IPv4 and IPv6). */
export function listeningSockets(): ListeningSocket[] {
  const out: ListeningSocket[] = []
  for (const file of TABLES) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const r of tcpTableRows(text))
      if (r.state === LISTEN) out.push({ port: r.localPort, inode: r.inode })
  }
  return out
}

/** Counts the rows of /proc/net/tcp-format `text` whose remote port is `port`, by state. */
export function countTcpStates(text: string, port: number): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of tcpTableRows(text)) {
    if (r.remotePort !== port) continue
    const state = STATES[r.state] ?? `state ${r.state}`
    counts[state] = (counts[state] ?? 0) + 1
  }
  return counts
}

/** The client connections to local `port`, by TCP state, over IPv4 and IPv6. */
export async function tcpStates(port: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const file of TABLES) {
    const text = await readFile(file, 'utf8').catch(() => '')
    for (const [k, v] of Object.entries(countTcpStates(text, port))) counts[k] = (counts[k] ?? 0) + v
  }
  return counts
}
