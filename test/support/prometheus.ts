/**
 * @module prometheus — a real Prometheus (built from the Go module proxy by
 * build/tools/build-go-tool.sh; missing means a failing test, never a skipped one) scraping
 * static targets every second, asked through its HTTP API.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { goToolPathAsync } from '../../build/tools/go-tools.ts'
import { toYaml } from '../../src/config/yaml/emit.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePort, LOOPBACK } from './ports.ts'

/** One instant-vector sample as `/api/v1/query` answers it. */
export interface Sample {
  metric: Record<string, string>
  value: [number, string]
}

/** A running Prometheus. */
export interface PrometheusServer {
  readonly url: string
  /** The instant vector of `expr` now; rejects when Prometheus refuses the query. */
  query(expr: string): Promise<Sample[]>
  /** Prometheus's output so far (for failure messages). */
  readonly log: string[]
  close(): Promise<void>
}

/** Scrape and rule evaluation interval: short, so rates exist seconds after the targets start. */
export const SCRAPE_INTERVAL = '1s'

/**
 * Starts Prometheus scraping `targets` (`host:port`, path /metrics, job `edgeop`, with the `pod`
 * label a Prometheus Operator monitor would add) and evaluating `ruleFiles`.
 */
export async function startPrometheus(
  targets: { address: string; pod: string }[],
  ruleFiles: string[] = [],
): Promise<PrometheusServer> {
  const bin = await goToolPathAsync('prometheus')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-prometheus-'))
  const config = {
    global: { scrape_interval: SCRAPE_INTERVAL, evaluation_interval: SCRAPE_INTERVAL },
    rule_files: ruleFiles,
    scrape_configs: [
      {
        job_name: 'edgeop',
        static_configs: targets.map((t) => ({ targets: [t.address], labels: { pod: t.pod } })),
      },
    ],
  }
  await writeFile(join(dir, 'prometheus.yml'), toYaml(config))
  const port = await freePort()
  const url = `http://${LOOPBACK}:${port}`
  const log: string[] = []
  const child: ChildProcess = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${LOOPBACK}:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  for (const s of [child.stdout, child.stderr]) s?.on('data', (b: Buffer) => log.push(b.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const close = async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await eventually(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200, {
      timeoutMs: 30_000,
      what: `Prometheus ready (${log.join('')})`,
    })
  } catch (err) {
    await close()
    throw err
  }
  return {
    url,
    log,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`)
      const body = (await res.json()) as { status: string; error?: string; data?: { result: Sample[] } }
      if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`)
      return body.data!.result
    },
    close,
  }
}
