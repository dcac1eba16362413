/**
 * @module operator-process — runs the built artifact (dist/edgeop.cjs) as a separate
 * process and reads its JSON logs, metrics and probes.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { NODE_FLAGS } from '../../build/node-flags.ts'
import { scrape } from './scrape.ts'

export const ARTIFACT = join(import.meta.dirname, '../../dist/edgeop.cjs')

/**
 * `edgeop run` as the operator benchmarks run it, on one namespace: the client limit raised (qps 200,
 * burst 400) and 4 workers, so that the operator, not its throttle, is measured.
 */
export const benchRunArgs = (kubeconfig: string, namespace: string): string[] => [
  'run',
  `--kubeconfig=${kubeconfig}`,
  `--namespace=${namespace}`,
  '--qps=200',
  '--burst=400',
  '--max-concurrent-reconciles=4',
]

/** One JSON log line. */
export type LogLine = { ts?: string; level?: string; msg?: string; [k: string]: unknown }

/** A running operator process. */
export interface OperatorProcess {
  readonly name: string
  readonly child: ChildProcess
  readonly logs: LogLine[]
  metricsUrl: string
  probesUrl: string
  readonly exited: Promise<number | null>
  /** Resolves with the first log line matching `pred` (already seen or future). */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
  /** The value of one metric sample (first match), or undefined. */
  metric(name: string, labels?: Record<string, string>): Promise<number | undefined>
  ready(): Promise<number>
  kill(signal: NodeJS.Signals): void
}

/**
 * Starts `node <NODE_FLAGS> dist/edgeop.cjs <args>` (as the images do) with JSON logs and ephemeral
 * metrics/probe ports; `options.command` replaces the `node … dist/edgeop.cjs` prefix (e.g. a single
 * executable under qemu). With `options.metricsToken`, metrics are served as in production (HTTPS,
 * every scrape authenticated and authorized) and scraped with that bearer token; without,
 * `--metrics-secure=false`. `options.env` is added to this process's environment for it.
 * `options.launch` replaces the command altogether: it gets the arguments that follow the
 * entrypoint and returns the command to spawn (e.g. an OCI runtime running a bundle whose
 * config it has just written with them).
 */
export async function startOperator(
  name: string,
  args: string[],
  startTimeoutMs = 60_000,
  options: {
    metricsToken?: string
    command?: readonly string[]
    env?: Record<string, string>
    launch?: (args: string[]) => Promise<readonly string[]>
  } = {},
): Promise<OperatorProcess> {
  const command = options.command ?? [process.execPath, ...NODE_FLAGS, ARTIFACT] // as the images run it
  const operatorArgs = [
    ...args,
    '--log-format=json',
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    ...(options.metricsToken === undefined ? ['--metrics-secure=false'] : []),
  ]
  const argv = options.launch ? await options.launch(operatorArgs) : [...command, ...operatorArgs]
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  })
  const logs: LogLine[] = []
  const waiters: { pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = []
  let buf = ''
  const onData = (d: Buffer): void => {
    buf += d.toString()
    let i = buf.indexOf('\n')
    while (i >= 0) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      i = buf.indexOf('\n')
      let parsed: LogLine
      try {
        parsed = JSON.parse(line) as LogLine
      } catch {
        parsed = { msg: line, level: 'raw' }
      }
      logs.push(parsed)
      for (const w of [...waiters])
        if (w.pred(parsed)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(parsed)
        }
    }
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const waitForLog = (pred: (l: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> => {
    const seen = logs.find(pred)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () =>
          reject(
            new Error(
              `${name}: no matching log line within ${timeoutMs} ms; last lines: ${JSON.stringify(logs.slice(-5))}`,
            ),
          ),
        timeoutMs,
      )
      waiters.push({
        pred,
        resolve: (l) => {
          clearTimeout(t)
          resolve(l)
        },
      })
    })
  }
  const serving = await waitForLog((l) => l.msg === 'serving', startTimeoutMs)
  const p: OperatorProcess = {
    name,
    child,
    logs,
    metricsUrl: `${serving.metricsScheme ?? 'http'}://${serving.metrics}/metrics`,
    probesUrl: `http://${serving.probes}`,
    exited,
    waitForLog,
    async metric(metricName, labels = {}) {
      const r = await scrape(p.metricsUrl, options.metricsToken)
      if (r.status !== 200) throw new Error(`${name}: GET /metrics answered ${r.status}`)
      const text = r.body
      for (const line of text.split('\n')) {
        if (!line.startsWith(`${metricName}{`) && !line.startsWith(`${metricName} `)) continue
        if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
          return Number(line.slice(line.lastIndexOf(' ') + 1))
      }
      return undefined
    },
    ready: () => fetch(`${p.probesUrl}/readyz`).then((r) => r.status),
    kill: (signal) => void child.kill(signal),
  }
  return p
}
