/**
 * @module proc — what the kernel says about a process: CPU time and memory, read the same way
 * for every peer whatever its language.
 */
import { readFileSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100

/** A snapshot of one process. */
export interface ProcSample {
  /** user + system CPU seconds so far. */
  cpuSeconds: number
  /** Resident set size, MB (VmRSS). */
  rssMb: number
  /** Peak resident set size so far, MB (VmHWM). */
  peakRssMb: number
}

/** Reads /proc/<pid>; undefined when the process is gone. */
export function sampleProc(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const utime = Number(fields[11])
    const stime = Number(fields[12])
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
    return {
      cpuSeconds: (utime + stime) / TICKS_PER_SECOND,
      rssMb: kb('VmRSS') / 1024,
      peakRssMb: kb('VmHWM') / 1024,
    }
  } catch {
    return undefined
  }
}
