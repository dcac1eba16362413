/**
 * @module exec — run a short-lived command and collect its output.
 *
 * For tools that finish quickly (`openssl`, `bash build-binaries.sh`). Long-running
 * servers go through {@link ManagedProcess} in `process.ts` instead.
 */
import { spawn } from 'node:child_process'
import { EdgeopError } from '../core/errors.ts'

/** What a finished command printed. */
export interface ExecResult {
  stdout: string
  stderr: string
}

/** Options for {@link exec}. */
export interface ExecOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Bytes written to the command's stdin, then stdin is closed. */
  input?: string
  /** Forward the command's stderr to ours as it arrives (for long builds). */
  inheritStderr?: boolean
}

/**
 * Runs `file` with `args` (no shell) and resolves with its output when it exits 0.
 * Rejects with an error naming the command, its exit status and its stderr otherwise.
 */
export function exec(file: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [
        options.input === undefined ? 'ignore' : 'pipe',
        'pipe',
        options.inheritStderr ? 'inherit' : 'pipe',
      ],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout?.on('data', (c: Buffer) => out.push(c))
    child.stderr?.on('data', (c: Buffer) => err.push(c))
    child.on('error', (e) =>
      reject(
        new EdgeopError('EDGEOP_ERR_CONTROL_PLANE', `${file}: ${e.message}`, {
          step: `run ${file}`,
          cause: e,
        }),
      ),
    )
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8')
      const stderr = Buffer.concat(err).toString('utf8')
      if (code === 0) return resolve({ stdout, stderr })
      const status = signal === null ? `exit code ${code}` : `signal ${signal}`
      reject(
        new EdgeopError(
          'EDGEOP_ERR_CONTROL_PLANE',
          `${file} ${args.join(' ')} failed (${status})${stderr ? `:\n${stderr.trim()}` : ''}`,
          { step: `run ${file}` },
        ),
      )
    })
    if (child.stdin !== null) {
      child.stdin.on('error', () => {}) // EPIPE when the command exits without reading; its exit status tells
      child.stdin.end(options.input)
    }
  })
}
