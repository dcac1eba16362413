/**
 * @module peers — the libraries measured, how each is built and started, and one running peer
 * process as the driver sees it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import * as esbuild from 'esbuild'
import { flagRefusal, HELLO_EVENT, nodeFlagsOf } from './peer-flags.ts'
import { type ProcSample, sampleProc } from './proc.ts'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '../../..')
export const BENCH_DIR = join(ROOT, 'test/bench')
export const CACHE_DIR = join(homedir(), '.cache/edgeop/bench')

export type PeerId = 'edgeop' | 'client-node' | 'client-go' | 'kube-rs'
export type Mode = 'full' | 'strip' | 'metadata'

/** A peer library ready to run. */
export interface Peer {
  id: PeerId
  /** Name and version, e.g. `client-go v0.37.2`. */
  label: string
  /** Informer modes it supports (memory workload). */
  modes: readonly Mode[]
  /** Supports the workqueue workload. */
  queue: boolean
  command(job: object): PeerCommand
}

/** The process that runs a peer on one job. */
export interface PeerCommand {
  file: string
  args: string[]
  /**
   * Node peers only: the flags the process must report in its first message (`hello` with
   * `process.execArgv`); the driver refuses the process otherwise. Unset for a peer that is no Node
   * process, which therefore cannot run a job with `nodeFlags`.
   */
  execArgv?: readonly string[]
}

/** A peer that could not be made ready, and why. */
export interface MissingPeer {
  id: PeerId
  reason: string
}

function npmVersion(pkg: string): string {
  const p = join(ROOT, 'node_modules', pkg, 'package.json')
  return (JSON.parse(readFileSync(p, 'utf8')) as { version: string }).version
}

/**
 * Bundles a TypeScript peer with everything it imports into one minified ESM file, as a user
 * would ship it (and as peers.md measured the peers). Running the `.ts` files directly would
 * load Node's type stripper into every process (tens of MB of RSS, slower start) and spread
 * the libraries over hundreds of module files.
 */
async function bundle(file: string): Promise<string> {
  const outfile = join(CACHE_DIR, 'peers', file.replace(/\.ts$/, '.mjs'))
  await esbuild.build({
    entryPoints: [join(BENCH_DIR, 'peers', file)],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'error',
  })
  return outfile
}

async function nodePeer(id: PeerId, label: string, file: string, modes: readonly Mode[]): Promise<Peer> {
  const script = await bundle(file)
  return {
    id,
    label,
    modes,
    queue: id === 'edgeop',
    command: (job) => nodePeerCommand(script, job),
  }
}

/**
 * How the benchmark starts a Node peer `script` on `job`: `--expose-gc` (for settled heap readings)
 * and the job's `nodeFlags` before the script, which the process must then report having received.
 */
export function nodePeerCommand(script: string, job: object): PeerCommand {
  const execArgv = ['--expose-gc', ...nodeFlagsOf(job)]
  return { file: process.execPath, args: [...execArgv, script, JSON.stringify(job)], execArgv }
}

export function edgeopPeer(): Promise<Peer> {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
    .version
  return nodePeer('edgeop', `edgeop ${version}`, 'edgeop.ts', ['full', 'strip', 'metadata'])
}

export function clientNodePeer(): Promise<Peer> {
  return nodePeer('client-node', `client-node ${npmVersion('@kubernetes/client-node')}`, 'client-node.ts', [
    'full',
  ])
}

function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs,
        maxBuffer: 64 << 20,
      },
      (err, stdout, stderr) => resolve({ ok: err === null, output: `${stdout}${stderr}`.trim() }),
    )
  })
}

async function hashFiles(dir: string, names: string[]): Promise<string> {
  const h = createHash('sha256')
  for (const n of names) h.update(n).update(await readFile(join(dir, n)))
  return h.digest('hex').slice(0, 12)
}

const GO_DIR = join(BENCH_DIR, 'go')
const GO_VERSION_OF_CLIENT = (): string =>
  /k8s\.io\/client-go (v[\w.-]+)/.exec(readFileSync(join(GO_DIR, 'go.mod'), 'utf8'))?.[1] ?? '?'

/** Builds (or finds cached) the client-go peer binary. */
export async function clientGoPeer(log: (s: string) => void): Promise<Peer | MissingPeer> {
  const goVersion = await run('go', ['env', 'GOVERSION'], { cwd: GO_DIR, timeoutMs: 30_000 })
  if (!goVersion.ok) return { id: 'client-go', reason: `go not usable: ${goVersion.output}` }
  const sources = (await readdir(GO_DIR)).filter((f) => /\.go$|^go\.(mod|sum)$/.test(f)).sort()
  const bin = join(CACHE_DIR, `edgeop-bench-go-${await hashFiles(GO_DIR, sources)}-${goVersion.output}`)
  if (!existsSync(bin)) {
    log(`building the client-go peer (${goVersion.output}; a first build of client-go takes minutes) …`)
    await mkdir(CACHE_DIR, { recursive: true })
    const t0 = performance.now()
    const built = await run('go', ['build', '-trimpath', '-o', bin, '.'], {
      cwd: GO_DIR,
      env: { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
      timeoutMs: 20 * 60_000,
    })
    if (!built.ok) return { id: 'client-go', reason: `go build failed: ${built.output.slice(-2000)}` }
    log(`built ${bin} in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  }
  return {
    id: 'client-go',
    label: `client-go ${GO_VERSION_OF_CLIENT()} (${goVersion.output})`,
    modes: ['full', 'strip', 'metadata'],
    queue: true,
    command: (job) => ({ file: bin, args: [JSON.stringify(job)] }),
  }
}

const RUST_DIR = join(BENCH_DIR, 'rust')
const RUST_TARGET = join(CACHE_DIR, 'rust-target')

/** Builds the kube-rs peer with cargo (incremental; skipped when cargo is missing or too slow). */
export async function kubeRsPeer(log: (s: string) => void, timeoutMs: number): Promise<Peer | MissingPeer> {
  const cargo = await run('cargo', ['--version'], { cwd: RUST_DIR, timeoutMs: 30_000 })
  if (!cargo.ok) return { id: 'kube-rs', reason: `cargo not usable: ${cargo.output}` }
  const bin = join(RUST_TARGET, 'release/edgeop-bench-rs')
  log(
    `cargo build --release of the kube-rs peer (up to ${Math.round(timeoutMs / 60_000)} min on a first build) …`,
  )
  const t0 = performance.now()
  const built = await run('cargo', ['build', '--release', '--locked', '--quiet'], {
    cwd: RUST_DIR,
    env: { CARGO_TARGET_DIR: RUST_TARGET },
    timeoutMs,
  })
  if (!built.ok || !existsSync(bin))
    return {
      id: 'kube-rs',
      reason: `cargo build failed after ${((performance.now() - t0) / 1000).toFixed(0)} s: ${built.output.slice(-2000) || 'timed out'}`,
    }
  const lock = readFileSync(join(RUST_DIR, 'Cargo.lock'), 'utf8')
  const kube = /name = "kube"\nversion = "([^"]+)"/.exec(lock)?.[1] ?? '?'
  const rustc = (await run('rustc', ['--version'], { cwd: RUST_DIR, timeoutMs: 30_000 })).output.split(' ')[1]
  return {
    id: 'kube-rs',
    label: `kube-rs ${kube} (rustc ${rustc})`,
    modes: ['full', 'strip', 'metadata'],
    queue: false,
    command: (job) => ({ file: bin, args: [JSON.stringify(job)] }),
  }
}

/** One protocol message from a peer. */
export type Message = { event: string } & Record<string, unknown>

/** A running peer process. */
export class PeerProcess {
  readonly peer: Peer
  readonly child: ChildProcess
  readonly pid: number
  /** performance.now() just before spawn. */
  readonly spawnedAt: number
  readonly #messages: Message[] = []
  #wake: (() => void) | undefined
  #stderr = ''
  #exit: string | undefined
  /** The flags the first message must show, until it has come (Node peers). */
  #expectedFlags: readonly string[] | undefined
  /** Why the process was refused: it did not receive the flags its row names. */
  #refused: string | undefined

  private constructor(peer: Peer, job: object) {
    this.peer = peer
    const { file, args, execArgv } = peer.command(job)
    const flags = nodeFlagsOf(job)
    if (flags.length > 0 && execArgv === undefined)
      throw new Error(
        `${peer.label}: the job asks for Node flags ${flags.join(' ')}, but the peer is no Node process`,
      )
    this.#expectedFlags = execArgv
    this.spawnedAt = performance.now()
    this.child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: ROOT })
    this.pid = this.child.pid ?? -1
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{') || this.#refused !== undefined) return
      let message: Message
      try {
        message = JSON.parse(line) as Message
      } catch {
        return
      }
      const expected = this.#expectedFlags
      if (expected !== undefined) {
        this.#expectedFlags = undefined
        this.#refused = flagRefusal(expected, message)
        if (this.#refused !== undefined) {
          this.kill()
          this.#wake?.()
          return
        }
        if (message.event === HELLO_EVENT) return
      }
      this.#messages.push({ ...message, at: performance.now() })
      this.#wake?.()
    })
    this.child.stderr!.on('data', (d: Buffer) => {
      this.#stderr = (this.#stderr + d.toString('utf8')).slice(-4000)
    })
    this.child.on('exit', (code, signal) => {
      this.#exit = `exited with ${signal ?? `code ${code}`}`
      this.#wake?.()
    })
    this.child.stdin!.on('error', () => {})
  }

  /**
   * Spawns `peer` on `job`. Throws when the job asks for Node flags and the peer is no Node process;
   * {@link next} rejects when a Node peer's first message does not show every flag of its command.
   */
  static start(peer: Peer, job: object): PeerProcess {
    return new PeerProcess(peer, job)
  }

  /** The next message with `event` (earlier ones of other kinds are dropped). */
  async next(event: string, timeoutMs: number): Promise<Message & { at: number }> {
    const deadline = performance.now() + timeoutMs
    for (;;) {
      if (this.#refused !== undefined) throw this.#fail(`refused: ${this.#refused}`)
      const i = this.#messages.findIndex((m) => m.event === event)
      if (i >= 0) return this.#messages.splice(0, i + 1)[i] as Message & { at: number }
      if (this.#exit !== undefined) throw this.#fail(`${this.#exit} before "${event}"`)
      const left = deadline - performance.now()
      if (left <= 0) throw this.#fail(`no "${event}" within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left)
        this.#wake = () => {
          clearTimeout(t)
          resolve()
        }
      })
      this.#wake = undefined
    }
  }

  #fail(what: string): Error {
    this.kill()
    return new Error(
      `${this.peer.label}: ${what}${this.#stderr ? `\n  stderr: ${this.#stderr.trim().slice(-1500)}` : ''}`,
    )
  }

  send(command: string): void {
    if (this.#exit === undefined) this.child.stdin!.write(`${command}\n`)
  }

  sample(): ProcSample {
    const s = sampleProc(this.pid)
    if (s === undefined) throw this.#fail('process gone while sampling /proc')
    return s
  }

  /** Asks the peer to stop; kills it when it does not exit within 10 s. */
  async stop(): Promise<void> {
    if (this.#exit !== undefined) return
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()))
    this.send('stop')
    this.child.stdin!.end()
    const t = setTimeout(() => this.kill(), 10_000)
    await exited
    clearTimeout(t)
  }

  kill(): void {
    if (this.#exit === undefined) this.child.kill('SIGKILL')
  }
}
