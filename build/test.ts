/**
 * @module build/test — `npm test`: unit tests, then integration tests against a real control plane.
 *
 *     node build/test.ts all|unit|integration [extra node --test flags…]
 *
 * For `all` and `integration` the runner finds or builds the binaries
 * (`EDGEOP_TEST_ASSETS`, the build cache, or `test/controlplane/build-binaries.sh`),
 * starts ONE control plane for the run in a supervisor child process (in `all`, while
 * the unit tests run), gives its control API to the integration test processes through
 * `EDGEOP_TEST_CONTROL_URL` / `EDGEOP_TEST_CONTROL_TOKEN` / `EDGEOP_TEST_KUBECONFIG`
 * (see `test/controlplane/env.ts`), runs them, and always tears the control plane down.
 * The supervisor also stops by itself if this process dies (its stdin closes).
 *
 * Integration files run two at a time: each works in its own namespaces, and a file
 * that disturbs everyone (compact, restart, stop etcd) asks for an exclusive lease
 * (`getTestEnv({ exclusive: true })`), which waits for the other files and keeps new
 * ones out until it exits. Missing Go and missing binaries fail the run with a message;
 * integration tests are never skipped silently.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AssetsUnavailableError, resolveBinaries } from '../test/controlplane/assets.ts'
import { onTerminationSignal } from '../test/controlplane/cleanup.ts'
import type { ProcessStats, StartTimings } from '../test/controlplane/control-plane.ts'
import { CONTROL_TOKEN_ENV, CONTROL_URL_ENV, KUBECONFIG_ENV } from '../test/controlplane/env.ts'
import { type LaunchedSupervisor, launchSupervisor } from '../test/controlplane/supervisor-launch.ts'
import { nodeBinaryDir } from '../test/node/assets.ts'
import { findTestFiles, type Suite } from './test-files.ts'
import { goToolPathAsync } from './tools/go-tools.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Test files run in parallel per suite. 2 matches the 2-core CI machine: unit files are
 * CPU-light (virtual clocks), integration files mostly wait on the apiserver.
 */
const UNIT_CONCURRENCY = 2
const INTEGRATION_CONCURRENCY = 2

/** The Go tools unit tests run (test/support/rendered-manifests.ts), built before them. */
const UNIT_TOOLS = ['kustomize', 'helm'] as const

/** Per-test timeouts: a hung test fails the run instead of hanging CI. */
const UNIT_TEST_TIMEOUT_MS = 120_000
const INTEGRATION_TEST_TIMEOUT_MS = 300_000

type Mode = 'all' | Suite

const log = (message: string): void => {
  process.stderr.write(`${message}\n`)
}

let running: ChildProcess | undefined
let supervisor: LaunchedSupervisor | undefined

onTerminationSignal(async () => {
  running?.kill('SIGTERM')
  await supervisor?.stop()
})

/** Runs `node --test` on `files`; resolves with its exit code. */
function runNodeTest(
  files: string[],
  concurrency: number,
  timeoutMs: number,
  extra: string[],
  env: NodeJS.ProcessEnv,
) {
  // No --test-force-exit: with process isolation and concurrency it drops the tail of a file's
  // verdicts and still exits 0 (nodejs/node#64833; a CI run here reported 689 of 701 tests).
  // A file that leaks a handle now hangs the run, which is loud, instead of losing results.
  const args = [
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    ...extra,
    ...files,
  ]
  return new Promise<number>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit', env })
    running = child
    child.on('exit', (code, signal) => {
      running = undefined
      resolve(code ?? (signal === null ? 1 : 128 + 15))
    })
  })
}

function mib(kb: number | undefined): string {
  return kb === undefined ? '-' : `${(kb / 1024).toFixed(0)} MiB`
}

function summary(timings: StartTimings, processes: ProcessStats[]): string {
  const peaks = processes.map((p) => `${p.name} ${mib(p.peakRssKb)}`).join(', ')
  const total = processes.reduce((sum, p) => sum + p.peakRssKb, 0)
  return [
    `control plane: ready in ${(timings.total / 1000).toFixed(1)} s`,
    `(certs ${timings.pki} ms, etcd ${timings.etcd} ms, apiservers ${timings.apiservers} ms);`,
    `peak RSS ${peaks} (sum ${mib(total)})`,
  ].join(' ')
}

async function fetchStats(
  s: LaunchedSupervisor,
): Promise<{ timings: StartTimings; processes: ProcessStats[] } | undefined> {
  try {
    const res = await fetch(`${s.state.controlUrl}/v1/stats`, {
      headers: { authorization: `Bearer ${s.state.controlToken}` },
    })
    return (await res.json()) as { timings: StartTimings; processes: ProcessStats[] }
  } catch {
    return undefined
  }
}

async function main(): Promise<number> {
  const mode = (process.argv[2] ?? 'all') as Mode
  const extra = process.argv.slice(3)
  if (!['all', 'unit', 'integration'].includes(mode)) {
    log('usage: node build/test.ts all|unit|integration [node --test flags…]')
    return 2
  }
  const unitFiles = mode === 'integration' ? [] : await findTestFiles(ROOT, 'unit')
  const integrationFiles = mode === 'unit' ? [] : await findTestFiles(ROOT, 'integration')
  let failed = false

  // The unit tests render the chart and the kustomize overlays: on a cold machine build helm and
  // kustomize now, beside the control plane's binaries, and wait for them before the unit tests, whose
  // synchronous first call would otherwise build them inside a test and pass its timeout (a cold CI
  // run: one chart test took 1,598 s building helm).
  const unitTools =
    unitFiles.length > 0
      ? Promise.all(UNIT_TOOLS.map((t) => goToolPathAsync(t))).then(
          () => undefined,
          (err: unknown) => err,
        )
      : undefined

  // Start the control plane first so it comes up while the unit tests run.
  let starting: Promise<LaunchedSupervisor> | undefined
  let assetsError: Error | undefined
  let tools: Promise<unknown> | undefined
  if (integrationFiles.length > 0) {
    try {
      const binaries = await resolveBinaries({ log })
      starting = launchSupervisor({ binDir: binaries.dir, uncached: 'eager' })
      starting.then((s) => (supervisor = s)).catch(() => {})
      // kustomize and helm for the manifest tests, prometheus and promtool for the monitoring
      // tests, jaeger for the tracing test, the real node's binaries (kubelet, containerd, runc, CNI
      // plugins, one after the other) for the image and node tests, built (once per version) while
      // the unit tests run.
      tools = Promise.all([
        ...(['kustomize', 'helm', 'prometheus', 'promtool', 'jaeger'] as const).map((t) =>
          goToolPathAsync(t),
        ),
        nodeBinaryDir('all'),
      ])
      tools.catch(() => {})
    } catch (err) {
      if (!(err instanceof AssetsUnavailableError)) throw err
      assetsError = err
    }
  } else if (mode !== 'unit') {
    log('integration: no files in test/integration/')
  }

  try {
    if (unitFiles.length > 0) {
      const err = await unitTools
      // Without them the tests that render manifests fail on their own, naming what is missing.
      if (err !== undefined) log(`unit: ${err instanceof Error ? err.message : String(err)}`)
      log(`unit: ${unitFiles.length} files`)
      const code = await runNodeTest(unitFiles, UNIT_CONCURRENCY, UNIT_TEST_TIMEOUT_MS, extra, {
        ...process.env,
        [CONTROL_URL_ENV]: '',
        [CONTROL_TOKEN_ENV]: '',
      })
      if (code !== 0) failed = true
    }
    if (assetsError !== undefined) {
      log(`\nintegration: CANNOT RUN\n${assetsError.message}`)
      return 1
    }
    if (tools !== undefined) {
      const err = await tools.then(
        () => undefined,
        (e: unknown) => e,
      )
      if (err !== undefined) {
        log(`\nintegration: CANNOT RUN\n${err instanceof Error ? err.message : String(err)}`)
        return 1
      }
    }
    if (starting !== undefined) {
      let s: LaunchedSupervisor
      try {
        s = await starting
      } catch (err) {
        log(
          `\nintegration: the control plane did not start:\n${err instanceof Error ? err.message : String(err)}`,
        )
        return 1
      }
      log(
        `integration: ${integrationFiles.length} files against kube-apiserver ${s.state.info.versions.kubernetes} (${s.state.kubeconfig})`,
      )
      const code = await runNodeTest(
        integrationFiles,
        INTEGRATION_CONCURRENCY,
        INTEGRATION_TEST_TIMEOUT_MS,
        extra,
        {
          ...process.env,
          [CONTROL_URL_ENV]: s.state.controlUrl,
          [CONTROL_TOKEN_ENV]: s.state.controlToken,
          [KUBECONFIG_ENV]: s.state.kubeconfig,
        },
      )
      if (code !== 0) failed = true
      const stats = await fetchStats(s)
      if (stats !== undefined) log(summary(stats.timings, stats.processes))
    }
  } finally {
    const s = supervisor ?? (await starting?.catch(() => undefined))
    await s?.stop()
  }
  return failed ? 1 : 0
}

process.exitCode = await main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err))
  return 1
})
