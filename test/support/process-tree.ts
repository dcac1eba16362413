/**
 * @module process-tree — finds the processes a command started (by an environment mark) and
 * the TCP ports they listen on, from Linux's `/proc`, so a test can check they are all gone.
 *
 * A process is identified by its PID *and* its start time (field 22 of `/proc/<pid>/stat`),
 * so a PID the kernel has reused for an unrelated process never counts as "still running".
 * A zombie (exited, not yet reaped) counts as gone: it holds no memory, files or ports.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { listeningSockets } from './tcp-table.ts'

export { type ListeningSocket, listeningSockets } from './tcp-table.ts'

/** One process seen in `/proc`. */
export interface SeenProcess {
  pid: number
  /** Start time in clock ticks since boot; with `pid` it names the process uniquely. */
  startTime: string
  /** `argv` joined by spaces (for messages). */
  command: string
}

/** `/proc/<pid>/stat` fields after the `(comm)` field: state is index 0, start time index 19. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
}

/**
 * Every live process whose environment holds `name=value` (environments are inherited, so this
 * is everything a command started that did not clear its environment), except this process.
 */
export function processesMarkedBy(name: string, value: string): SeenProcess[] {
  const entry = `${name}=${value}`
  const found: SeenProcess[] = []
  for (const pid of pids()) {
    if (pid === process.pid) continue
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry)) continue
      const fields = statFields(pid)
      if (fields === undefined || fields[0] === 'Z') continue
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
      found.push({ pid, startTime: fields[19]!, command })
    } catch {
      // the process ended while we looked, or is not ours to read
    }
  }
  return found
}

/** Whether `p` still runs (same PID and start time, not a zombie). */
export function stillRunning(p: SeenProcess): boolean {
  const fields = statFields(p.pid)
  return fields !== undefined && fields[0] !== 'Z' && fields[19] === p.startTime
}

/** Inodes of the sockets `pid` has open (empty if it is gone). */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>()
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return inodes
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) inodes.add(m[1]!)
    } catch {
      // closed while we looked
    }
  }
  return inodes
}

/** The TCP ports `processes` listen on, each with the command that owns it. */
export function listeningPortsOf(processes: readonly SeenProcess[]): Map<number, string> {
  const owner = new Map<string, string>()
  for (const p of processes) for (const inode of socketInodes(p.pid)) owner.set(inode, p.command)
  const ports = new Map<number, string>()
  for (const s of listeningSockets()) {
    const command = owner.get(s.inode)
    if (command !== undefined) ports.set(s.port, command)
  }
  return ports
}
