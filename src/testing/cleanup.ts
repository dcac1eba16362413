/**
 * @module cleanup — last-resort teardown when the owning process ends abruptly.
 *
 * Normal teardown is async and orderly (SIGTERM, wait, remove directories). This module
 * covers the paths where that cannot run: `process.on('exit')` may only do synchronous
 * work, so it SIGKILLs every child still registered and removes registered directories
 * with `rmSync`. SIGINT/SIGTERM run the registered async handlers first, then exit
 * with the conventional status 128 + signal number.
 */
import { rmSync } from 'node:fs'

const livePids = new Set<number>()
const tempDirs = new Set<string>()
const signalHandlers = new Set<() => Promise<void>>()
let exitHookInstalled = false
let signalHooksInstalled = false
let shuttingDown = false

/** Upper bound for async signal handlers before the process exits anyway. */
export const SIGNAL_TEARDOWN_TIMEOUT_MS = 30_000

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const pid of livePids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  })
}

/** Registers a child PID to be SIGKILLed if this process exits while it still runs. */
export function trackPid(pid: number): void {
  installExitHook()
  livePids.add(pid)
}

/** Forgets a PID (it exited or was stopped properly). */
export function untrackPid(pid: number): void {
  livePids.delete(pid)
}

/** Registers a directory to be removed if this process exits before removing it itself. */
export function trackTempDir(dir: string): void {
  installExitHook()
  tempDirs.add(dir)
}

/** Forgets a directory (it was removed properly). */
export function untrackTempDir(dir: string): void {
  tempDirs.delete(dir)
}

/**
 * Runs `handler` (awaited, bounded by {@link SIGNAL_TEARDOWN_TIMEOUT_MS}) on SIGINT,
 * SIGTERM or SIGHUP, then exits with 128 + signal number. A second signal exits at once
 * (the exit hook still SIGKILLs tracked children). Returns a function that unregisters.
 */
export function onTerminationSignal(handler: () => Promise<void>): () => void {
  installExitHook()
  signalHandlers.add(handler)
  if (!signalHooksInstalled) {
    signalHooksInstalled = true
    for (const [signal, number] of [
      ['SIGINT', 2],
      ['SIGTERM', 15],
      ['SIGHUP', 1],
    ] as const) {
      process.on(signal, () => {
        if (shuttingDown) process.exit(128 + number)
        shuttingDown = true
        const timeout = new Promise<void>((resolve) =>
          setTimeout(resolve, SIGNAL_TEARDOWN_TIMEOUT_MS).unref(),
        )
        const all = Promise.allSettled([...signalHandlers].map((h) => h()))
        void Promise.race([all, timeout]).finally(() => process.exit(128 + number))
      })
    }
  }
  return () => signalHandlers.delete(handler)
}
