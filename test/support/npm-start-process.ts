/**
 * @module npm-start-process — `npm start` run as a user runs it from a terminal: in a process group
 * of its own (a shell job, whose group is what Ctrl-C signals), its stdout and stderr collected.
 */
import { type ChildProcess, spawn } from 'node:child_process'

/** How the process ended. */
export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** A running `npm <args>`. */
export interface NpmStart {
  readonly child: ChildProcess
  /** Resolves when npm has exited. */
  readonly exited: Promise<Exit>
  /** Everything printed so far, stdout and stderr interleaved as they arrived. */
  output(): string
  /** The last `lines` lines printed, for failure messages. */
  tail(lines?: number): string
  /** The first match of `re` in the output; rejects when npm exits first or after `timeoutMs`. */
  untilOutput(re: RegExp, timeoutMs: number): Promise<RegExpExecArray>
  /** Ctrl-C: SIGINT to every process of the group; how npm exited, or undefined after `timeoutMs`. */
  ctrlC(timeoutMs: number): Promise<Exit | undefined>
  /** SIGKILL to the group if npm still runs (the clean-up after a failure). */
  kill(): void
}

/** Starts `npm <args>` in `cwd` with exactly `env`. */
export function startNpm(args: string[], cwd: string, env: NodeJS.ProcessEnv): NpmStart {
  const child = spawn('npm', args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  for (const stream of [child.stdout!, child.stderr!])
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
  const tail = (lines = 60) => output.trimEnd().split('\n').slice(-lines).join('\n')
  const running = () => child.exitCode === null && child.signalCode === null
  return {
    child,
    exited,
    output: () => output,
    tail,
    untilOutput: (re, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const m = re.exec(output)
          if (m) {
            cleanup()
            resolve(m)
          }
          return m !== null
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`npm start printed no ${re} within ${timeoutMs} ms; output:\n${tail()}`))
        }, timeoutMs)
        const onData = (): void => void check()
        const cleanup = (): void => {
          clearTimeout(timer)
          child.stdout?.off('data', onData)
          child.stderr?.off('data', onData)
        }
        child.stdout?.on('data', onData)
        child.stderr?.on('data', onData)
        void exited.then(() => {
          if (!check()) {
            cleanup()
            reject(new Error(`npm start exited before printing ${re}; output:\n${tail()}`))
          }
        })
        check()
      }),
    ctrlC: (timeoutMs) => {
      process.kill(-child.pid!, 'SIGINT')
      const timeout = new Promise<undefined>((resolve) =>
        setTimeout(() => resolve(undefined), timeoutMs).unref(),
      )
      return Promise.race([exited, timeout])
    },
    kill: () => {
      if (child.pid === undefined || !running()) return
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    },
  }
}
