/**
 * @module exec-plugin-runner — starts an exec credential plugin bounded in time and output, and never leaves it behind.
 *
 * client-go runs a plugin with no time limit and reads all of its stdout into memory. A plugin that
 * hung held every request of edgeop for good (and outlived it); one that printed 600 MB took the
 * process to 1.8 GB and crashed it. Here a plugin runs in a process group of its own, which is
 * killed (with whatever it started) when it runs past its time, prints past its stdout cap, or when
 * edgeop exits or is told to stop while it runs.
 */
import type { ChildProcess } from 'node:child_process'

/** One plugin run as the runner sees it. */
export interface ExecRunRequest {
  /** Program name (looked up in PATH) or absolute path; started without a shell. */
  command: string
  /** Arguments, passed as they are. */
  args: string[]
  /** The complete environment of the plugin. */
  env: Record<string, string>
  /** Inherit our stdin (else the plugin gets none). stderr is always inherited. */
  interactive: boolean
  /** Stop the plugin after this long. Default (and what the provider sends): {@link EXEC_PLUGIN_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Stop the plugin once its stdout passes this many bytes. Default {@link MAX_EXEC_PLUGIN_STDOUT_BYTES}. */
  maxStdoutBytes?: number
}

/** What a run produced. */
export interface ExecRunResult {
  /** Null when killed by a signal. */
  exitCode: number | null
  /** Name of the signal that killed the plugin (e.g. `SIGKILL`); null or absent when it exited. */
  signal?: string | null
  /** Everything the plugin wrote to stdout, UTF-8 decoded; must be one ExecCredential JSON object. `''` when stopped. */
  stdout: string
  /** Set when the runner stopped the plugin: it ran past `timeoutMs` or printed past `maxStdoutBytes`. */
  stopped?: 'timeout' | 'output-limit' | undefined
}

/** Starts a plugin. Rejects with an error whose `code` is `'ENOENT'` when the command does not exist. */
export type ExecRunner = (request: ExecRunRequest) => Promise<ExecRunResult>

/**
 * How long a plugin may run: 60 s. Cloud plugins answer in 1–3 s (`aws eks get-token`,
 * `gke-gcloud-auth-plugin`) and a browser login (`kubelogin`) fits in a minute. client-go has no
 * limit; without one, a hung plugin held every request for good and was never run again.
 */
export const EXEC_PLUGIN_TIMEOUT_MS = 60_000

/**
 * Most stdout a plugin may print: 1 MiB. Its one ExecCredential holds a token (a few KiB) or a
 * certificate and key (about 5 KiB); client-go has no cap and reads it all into memory.
 */
export const MAX_EXEC_PLUGIN_STDOUT_BYTES = 1024 * 1024

/** The signals after which edgeop kills the plugins still running, then stops as it would have (when nothing else handles them). */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

/** Plugins still running: pid → whether it leads a process group of its own. */
const running = new Map<number, boolean>()
/** Plugins being spawned: the handlers are installed before `spawn()`, since the plugin may run before it returns. */
let starting = 0

function kill(pid: number, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

function killRunning(): void {
  for (const [pid, group] of running) kill(pid, group)
  running.clear()
  if (starting === 0) release()
}

function onStopSignal(signal: NodeJS.Signals): void {
  killRunning()
  // Ours was the only handler: do what the signal would have done without it.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
}

function watch(): void {
  process.on('exit', killRunning)
  for (const s of STOP_SIGNALS) process.on(s, onStopSignal)
}

function release(): void {
  process.off('exit', killRunning)
  for (const s of STOP_SIGNALS) process.off(s, onStopSignal)
}

const idle = (): boolean => running.size === 0 && starting === 0

/**
 * Installs the stop-signal handlers before a spawn. A signal's handler runs after the synchronous
 * `spawn()` and {@link track} that follow, so it finds the plugin tracked; without it, a SIGTERM
 * that came after the plugin started and before `spawn()` returned stopped edgeop by the default
 * action and the plugin outlived it (seen on a loaded 2-core machine).
 */
function hold(): void {
  if (idle()) watch()
  starting++
}

function track(child: ChildProcess, group: boolean): () => void {
  starting--
  const pid = child.pid
  if (pid === undefined) {
    if (idle()) release()
    return () => {}
  }
  running.set(pid, group)
  return () => {
    if (running.delete(pid) && idle()) release()
  }
}

/**
 * The default {@link ExecRunner}: `child_process.spawn` without a shell, stderr inherited (it never
 * passes through edgeop's memory). A non-interactive plugin gets a process group of its own, so that
 * what it starts is stopped with it; an interactive one stays in ours, so it keeps the terminal.
 * Past `request.timeoutMs` or past `request.maxStdoutBytes` of stdout, the plugin (its group) is
 * killed and the result says why (`stopped`), without its output.
 *
 * `node:child_process` is imported on the first run, not at start: it loads five built-in modules
 * (with `dgram`), which most kubeconfigs (tokens, certificates, in-cluster) never need, and under
 * the shipped V8 flags Node compiles each from source (docs/operations.md, *Start-up*).
 */
export const spawnExecPlugin: ExecRunner = (request) => {
  // Not `import()`: the single executable runs the artifact as a vm.Script (build/sea-main.cjs).
  const { spawn } = process.getBuiltinModule('node:child_process')
  const timeoutMs = request.timeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS
  const maxStdout = request.maxStdoutBytes ?? MAX_EXEC_PLUGIN_STDOUT_BYTES
  return new Promise((resolve, reject) => {
    const group = !request.interactive
    hold()
    let child: ChildProcess
    try {
      child = spawn(request.command, request.args, {
        env: request.env,
        stdio: [request.interactive ? 'inherit' : 'ignore', 'pipe', 'inherit'],
        detached: group,
        windowsHide: true,
      })
    } catch (err) {
      starting--
      if (idle()) release()
      reject(err)
      return
    }
    const untrack = track(child, group)
    const chunks: Buffer[] = []
    let bytes = 0
    let stopped: ExecRunResult['stopped']
    const stop = (why: NonNullable<ExecRunResult['stopped']>): void => {
      stopped ??= why
      chunks.length = 0
      if (child.pid !== undefined) kill(child.pid, group)
    }
    const timer = setTimeout(() => stop('timeout'), timeoutMs)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (stopped) return
      bytes += chunk.length
      if (bytes > maxStdout) stop('output-limit')
      else chunks.push(chunk)
    })
    child.on('error', (err) => {
      clearTimeout(timer)
      untrack()
      reject(err)
    })
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      untrack()
      resolve({ exitCode, signal, stdout: stopped ? '' : Buffer.concat(chunks).toString('utf8'), stopped })
    })
  })
}
