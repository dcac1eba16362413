/**
 * @module process — one long-running child process of the control plane (etcd, kube-apiserver, …).
 *
 * stdout and stderr go to a log file in the work directory (appended across restarts,
 * with a header line per start), so a failed start can print the tail. Processes are
 * stopped by their own PID only: SIGTERM, then SIGKILL after a grace period.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'
import { trackPid, untrackPid } from './cleanup.ts'
import { type EventuallyOptions, eventually } from './eventually.ts'

/** Time between SIGTERM and SIGKILL: plenty for a clean exit on loopback, and bounds a hung teardown. */
export const STOP_GRACE_MS = 10_000

/** Lines of the log file shown when a process fails to start. */
export const LOG_TAIL_LINES = 40

/** What to run. */
export interface ProcessSpec {
  /** Short name for messages and the stats table, e.g. `etcd`, `kube-apiserver-cached`. */
  name: string
  command: string
  args: readonly string[]
  /** Receives stdout and stderr. */
  logFile: string
  /** Extra environment on top of this process's environment. */
  env?: Record<string, string>
  /** Default grace period of {@link ManagedProcess.stop}; default {@link STOP_GRACE_MS}. */
  stopGraceMs?: number
}

/** Resident memory of a running process, in KiB, from `/proc/<pid>/status`. */
export interface MemoryStats {
  rssKb: number
  /** `VmHWM`: the highest RSS the process has had so far. */
  peakRssKb: number
}

/** How a process ended. */
export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

/** A child process that can be started, stopped and started again with the same arguments. */
export class ManagedProcess {
  readonly spec: ProcessSpec
  #child: ChildProcess | undefined
  #exited: Promise<ExitStatus> | undefined
  #peakRssKb = 0

  constructor(spec: ProcessSpec) {
    this.spec = spec
  }

  get name(): string {
    return this.spec.name
  }

  /** PID of the current run, if running. */
  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null
  }

  /** Resolves when the current run ends (never rejects). */
  get exited(): Promise<ExitStatus> {
    return this.#exited ?? Promise.resolve({ code: null, signal: null })
  }

  /** Spawns the process. Throws if it is already running or the binary cannot be executed. */
  start(): void {
    if (this.running)
      throw new EdgeopError('EDGEOP_ERR_CONTROL_PLANE', `${this.name} is already running (pid ${this.pid})`, {
        step: `start ${this.name}`,
      })
    const fd = openSync(this.spec.logFile, 'a')
    try {
      writeSync(
        fd,
        `\n=== ${new Date().toISOString()} start: ${this.spec.command} ${this.spec.args.join(' ')}\n`,
      )
      const child = spawn(this.spec.command, this.spec.args, {
        stdio: ['ignore', fd, fd],
        env: { ...process.env, ...this.spec.env },
      })
      this.#child = child
      this.#exited = new Promise((resolve) => {
        child.once('error', (err) => {
          appendFileSync(this.spec.logFile, `spawn error: ${err.message}\n`)
          resolve({ code: null, signal: null })
        })
        child.once('exit', (code, signal) => {
          if (child.pid !== undefined) untrackPid(child.pid)
          resolve({ code, signal })
        })
      })
      if (child.pid === undefined)
        throw new EdgeopError(
          'EDGEOP_ERR_CONTROL_PLANE',
          `could not start ${this.spec.command} (is it executable?)`,
          {
            step: `start ${this.name}`,
          },
        )
      trackPid(child.pid)
    } finally {
      closeSync(fd)
    }
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs` (at once when `graceMs` is 0); resolves when
   * the process has exited. No-op if not running.
   */
  async stop(graceMs = this.spec.stopGraceMs ?? STOP_GRACE_MS): Promise<ExitStatus | undefined> {
    const child = this.#child
    if (child === undefined || !this.running) return undefined
    this.memory() // records the final peak before the process disappears
    child.kill(graceMs <= 0 ? 'SIGKILL' : 'SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (this.running) child.kill('SIGKILL')
        resolve()
      }, graceMs)
    })
    await Promise.race([this.exited, killed])
    clearTimeout(timer)
    return this.exited
  }

  /** Current and peak RSS (peak across all runs of this process), or undefined if not running. */
  memory(): MemoryStats | undefined {
    const pid = this.pid
    if (pid === undefined) return undefined
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const field = (name: string): number =>
        Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
      const rssKb = field('VmRSS')
      this.#peakRssKb = Math.max(this.#peakRssKb, field('VmHWM'))
      return { rssKb, peakRssKb: this.#peakRssKb }
    } catch {
      return undefined
    }
  }

  /** Highest RSS seen in any run so far (KiB), including runs that have ended. */
  get peakRssKb(): number {
    this.memory()
    return this.#peakRssKb
  }

  /** The last `lines` lines of the log file. */
  async tail(lines = LOG_TAIL_LINES): Promise<string> {
    try {
      const text = await readFile(this.spec.logFile, 'utf8')
      return text.trimEnd().split('\n').slice(-lines).join('\n')
    } catch {
      return '(no log)'
    }
  }

  /**
   * {@link eventually} while this process runs: if it exits (or is not running), the wait fails at once,
   * and a timeout names the log file and its tail, both as {@link ManagedProcess.failure}.
   */
  async eventually<T>(
    check: () => T | Promise<T>,
    options: EventuallyOptions & { what: string },
  ): Promise<Exclude<T, undefined | false>> {
    const exited = new AbortController()
    if (this.running) void this.exited.then(() => exited.abort())
    else exited.abort()
    try {
      return await eventually(check, { ...options, signal: exited.signal })
    } catch (err) {
      if (!this.running) {
        const status = await this.exited
        throw await this.failure(
          `exited (code ${status.code}, signal ${status.signal}) while waiting for ${options.what}`,
        )
      }
      if (isEdgeopError(err, 'EDGEOP_ERR_TIMEOUT'))
        throw await this.failure(errorMessage(err), { retryable: true })
      throw err
    }
  }

  /** An error for a failed start: the reason, the log file's path and its tail. */
  async failure(reason: string, options: { retryable?: boolean } = {}): Promise<EdgeopError> {
    const tail = await this.tail()
    return new EdgeopError(
      'EDGEOP_ERR_CONTROL_PLANE',
      `${this.name}: ${reason}\n--- last lines of ${this.spec.logFile} ---\n${tail}\n---`,
      { step: `start ${this.name}`, retryable: options.retryable ?? false },
    )
  }
}
