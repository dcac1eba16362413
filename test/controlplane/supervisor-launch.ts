/**
 * @module supervisor-launch — start `supervisor.ts` as a child and wait for its ready line.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { UncachedMode } from './control-plane.ts'
import type { SupervisorState } from './supervisor.ts'

/** The supervisor entry script. */
export const SUPERVISOR_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'supervisor.ts')

/**
 * Bound on a whole start: a cold apiserver needs up to 120 s; building binaries is done
 * before launching (by the runner) or by the supervisor itself (private mode), so the
 * bound is generous.
 */
export const SUPERVISOR_READY_TIMEOUT_MS = 60 * 60_000

/** How long a stopping supervisor may take before it is SIGKILLed (its own processes get 10 s each). */
export const SUPERVISOR_STOP_TIMEOUT_MS = 60_000

/** Options for {@link launchSupervisor}. */
export interface LaunchOptions {
  binDir?: string
  workDir?: string
  uncached?: UncachedMode
  /** Where the supervisor's progress messages go; default: our stderr. */
  stderr?: 'inherit' | 'ignore' | number
  /**
   * Run it (and so the whole control plane) in its own process group, out of reach of a
   * terminal's Ctrl-C, so the caller decides when it stops (e.g. after its own children).
   */
  detached?: boolean
  /** Aborting it while the control plane starts stops the supervisor and rejects. */
  signal?: AbortSignal
  /** kube-apiserver flags (`--flag=value`), each replacing the control plane's own of the same name. */
  apiserverArgs?: readonly string[]
}

/** A running supervisor child. */
export interface LaunchedSupervisor {
  child: ChildProcess
  state: SupervisorState
  /** Lets this process exit while the supervisor runs (it stops when our end of its stdin closes). */
  unref(): void
  /** Stops the supervisor and waits for its teardown to finish. */
  stop(): Promise<void>
}

/**
 * Starts the supervisor with `--watch-stdin` (it dies with us) and resolves with its
 * state once the control plane is ready. Rejects with the supervisor's error otherwise.
 */
export async function launchSupervisor(options: LaunchOptions = {}): Promise<LaunchedSupervisor> {
  const args = [SUPERVISOR_SCRIPT, '--watch-stdin', `--uncached=${options.uncached ?? 'lazy'}`]
  if (options.binDir !== undefined) args.push(`--bin-dir=${options.binDir}`)
  if (options.workDir !== undefined) args.push(`--work-dir=${options.workDir}`)
  for (const a of options.apiserverArgs ?? []) args.push(`--apiserver-arg=${a}`)
  const child = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'],
    detached: options.detached ?? false,
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stdout = child.stdout as Readable
  const lines = createInterface({ input: stdout })
  const state = await new Promise<SupervisorState>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('control plane supervisor: not ready in time')),
      SUPERVISOR_READY_TIMEOUT_MS,
    )
    const fail = (message: string): void => {
      clearTimeout(timer)
      reject(new Error(message))
    }
    lines.once('line', (line) => {
      clearTimeout(timer)
      try {
        const msg = JSON.parse(line) as { ready?: SupervisorState; error?: string }
        if (msg.ready !== undefined) resolve(msg.ready)
        else fail(`control plane failed to start:\n${msg.error ?? line}`)
      } catch {
        fail(`control plane supervisor printed an unexpected line: ${line}`)
      }
    })
    child.once('error', (err) => fail(`control plane supervisor: ${err.message}`))
    if (options.signal?.aborted) fail('control plane start aborted')
    options.signal?.addEventListener('abort', () => fail('control plane start aborted'), { once: true })
    // 'close' (not 'exit'): stdout is drained by then, so a last error line is not lost.
    child.once('close', (code, signal) =>
      fail(`control plane supervisor exited early (code ${code}, signal ${signal})`),
    )
  }).catch(async (err: unknown) => {
    child.kill('SIGTERM')
    await exited
    throw err
  })
  lines.close()
  return {
    child,
    state,
    unref() {
      child.unref()
      ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
      ;(child.stdout as unknown as { unref?: () => void } | null)?.unref?.()
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.stdin?.end()
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), SUPERVISOR_STOP_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    },
  }
}
