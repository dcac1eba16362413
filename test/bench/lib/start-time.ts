/**
 * @module start-time — how long the artifact takes to start, measured from outside: the wall time of
 * a whole short command, and the time from spawning `edgeop run` until its first HTTP request
 * reaches a local listener posing as the API server (a plain-HTTP kubeconfig). Variants are run
 * interleaved, round by round in a shuffled order, so that the machine's load drifts affect all
 * alike; the spread (quartiles) is reported with the median.
 */
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { median, percentile } from './stats.ts'

/** One way of starting the artifact: the argv prefix (binary, flags, script) and extra environment. */
export interface StartVariant {
  name: string
  command: readonly string[]
  env?: Readonly<Record<string, string>>
}

/** A variant's measured runs. */
export interface StartTimes {
  name: string
  /** Wall milliseconds of each run. */
  wallMs: number[]
  /** CPU milliseconds (user + system) of each run, where measured; 10 ms resolution. */
  cpuMs: number[]
}

/** "median [p25–p75]" of `xs`, whole milliseconds. */
export const describeMs = (xs: readonly number[]): string =>
  `${median(xs).toFixed(0)} ms [${percentile(xs, 25).toFixed(0)}–${percentile(xs, 75).toFixed(0)}]`

/** Clock ticks of /proc/<pid>/stat (USER_HZ). */
const TICKS_PER_SECOND = 100

/** CPU milliseconds of this process's waited-for children so far (cutime + cstime). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND
}

/** Shuffles in place (Fisher–Yates). */
function shuffle<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
  return xs
}

/** Runs `<variant.command> ...args` to completion `rounds` times per variant, interleaved. */
export function timeCommands(
  variants: readonly StartVariant[],
  args: readonly string[],
  rounds: number,
): StartTimes[] {
  const out = variants.map((v) => ({ name: v.name, wallMs: [] as number[], cpuMs: [] as number[] }))
  for (let r = 0; r < rounds; r++) {
    for (const i of shuffle(variants.map((_, k) => k))) {
      const v = variants[i]!
      const cpu = childrenCpuMs()
      const t = performance.now()
      const ran = spawnSync(v.command[0]!, [...v.command.slice(1), ...args], {
        env: { ...process.env, ...v.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      const wall = performance.now() - t
      if (ran.status !== 0) throw new Error(`${v.name}: exited ${ran.status}: ${ran.stderr}`)
      out[i]!.wallMs.push(wall)
      out[i]!.cpuMs.push(childrenCpuMs() - cpu)
    }
  }
  return out
}

/** A local HTTP listener that records when each request arrives, and a kubeconfig pointing at it. */
async function fakeApiServer(
  dir: string,
): Promise<{ server: Server; kubeconfig: string; next: () => Promise<number> }> {
  let waiter: ((t: number) => void) | undefined
  const server = createServer((req, res) => {
    waiter?.(performance.now())
    waiter = undefined
    req.resume()
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"kind":"Status","code":503}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const kubeconfig = join(dir, 'first-request.kubeconfig')
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: local',
      '  cluster:',
      `    server: http://127.0.0.1:${port}`,
      'users:',
      '- name: bench',
      '  user:',
      '    token: bench',
      'contexts:',
      '- name: local',
      '  context:',
      '    cluster: local',
      '    user: bench',
      'current-context: local',
      '',
    ].join('\n'),
  )
  const next = () => new Promise<number>((resolve) => (waiter = resolve))
  return { server, kubeconfig, next }
}

/**
 * Spawn → first request: `<variant.command> run --kubeconfig=<local listener>` (ops servers off),
 * `rounds` times per variant, interleaved; each process is killed once its first request arrived.
 * Only `wallMs` is filled.
 */
export async function spawnToFirstRequest(
  variants: readonly StartVariant[],
  rounds: number,
  dir: string,
): Promise<StartTimes[]> {
  const { server, kubeconfig, next } = await fakeApiServer(dir)
  const out = variants.map((v) => ({ name: v.name, wallMs: [] as number[], cpuMs: [] as number[] }))
  try {
    for (let r = 0; r < rounds; r++) {
      for (const i of shuffle(variants.map((_, k) => k))) {
        const v = variants[i]!
        const arrived = next()
        const t = performance.now()
        const child = spawn(
          v.command[0]!,
          [
            ...v.command.slice(1),
            'run',
            `--kubeconfig=${kubeconfig}`,
            '--metrics-bind-address=0',
            '--health-probe-bind-address=0',
          ],
          { env: { ...process.env, ...v.env }, stdio: 'ignore' },
        )
        const exited = new Promise((resolve) => child.on('exit', resolve))
        const first = await Promise.race([
          arrived,
          exited.then(() => {
            throw new Error(`${v.name}: exited before its first request`)
          }),
        ])
        out[i]!.wallMs.push(first - t)
        child.kill('SIGKILL')
        await exited
      }
    }
  } finally {
    server.close()
  }
  return out
}
