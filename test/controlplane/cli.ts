/**
 * @module cli — a long-lived test control plane for development: `npm run cluster:up` / `cluster:down`.
 *
 *     node test/controlplane/cli.ts up      # start detached; prints KUBECONFIG and the control API
 *     node test/controlplane/cli.ts status  # is it running?
 *     node test/controlplane/cli.ts down    # stop it
 *
 * State lives in `<cache>/cluster/` (`~/.cache/edgeop/cluster/` by default): `state.json`
 * (PIDs, URLs), `supervisor.log`, and `work/` (certificates, kubeconfigs, process logs;
 * kept after `down` for post-mortems, wiped by the next `up`). The supervisor is a
 * detached process; `down` signals it by PID, and if it has died, kills the control
 * plane's processes by their recorded PIDs.
 */
import { spawn } from 'node:child_process'
import { existsSync, openSync, readFileSync } from 'node:fs'
import { mkdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { AssetsUnavailableError, cacheRoot, resolveBinaries } from './assets.ts'
import { CONTROL_TOKEN_ENV, CONTROL_URL_ENV } from './env.ts'
import type { SupervisorState } from './supervisor.ts'
import { SUPERVISOR_SCRIPT } from './supervisor-launch.ts'

/** A cold start takes seconds once the binaries exist; bound it generously. */
const UP_TIMEOUT_MS = 180_000
/** The supervisor stops each process with a 10 s grace; allow for all of them. */
const DOWN_TIMEOUT_MS = 60_000
const POLL_MS = 250

const stateDir = join(cacheRoot(), 'cluster')
const stateFile = join(stateDir, 'state.json')
const logFile = join(stateDir, 'supervisor.log')
const workDir = join(stateDir, 'work')

const say = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

/** True if `pid` is alive and its command line contains `needle` (guards against PID reuse). */
function alive(pid: number, needle: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
  } catch {
    return false
  }
}

async function readState(): Promise<SupervisorState | undefined> {
  try {
    return JSON.parse(await readFile(stateFile, 'utf8')) as SupervisorState
  } catch {
    return undefined
  }
}

function printHowTo(state: SupervisorState): void {
  say(`  export KUBECONFIG=${state.kubeconfig}`)
  say('  # integration test files run with `node --test` use this cluster when these are set:')
  say(`  export ${CONTROL_URL_ENV}=${state.controlUrl} ${CONTROL_TOKEN_ENV}=${state.controlToken}`)
  say(`Stop it with: npm run cluster:down    (logs: ${state.workDir}/*.log)`)
}

/** Kills whatever a dead supervisor left behind, by recorded PID. */
async function killLeftovers(state: SupervisorState): Promise<void> {
  for (const { pid, name } of state.pids) {
    const binary = name.startsWith('kube-apiserver') ? 'kube-apiserver' : name
    if (alive(pid, binary)) process.kill(pid, 'SIGKILL')
  }
  await rm(state.etcdDataDir, { recursive: true, force: true })
  await rm(stateFile, { force: true })
}

async function up(): Promise<number> {
  const existing = await readState()
  if (existing !== undefined) {
    if (alive(existing.pid, 'supervisor.ts')) {
      say(`The test control plane is already running (supervisor pid ${existing.pid}).`)
      printHowTo(existing)
      return 0
    }
    await killLeftovers(existing)
  }
  const binaries = await resolveBinaries()
  await rm(workDir, { recursive: true, force: true })
  await mkdir(workDir, { recursive: true, mode: 0o700 })
  const log = openSync(logFile, 'w')
  const child = spawn(
    process.execPath,
    [
      SUPERVISOR_SCRIPT,
      `--bin-dir=${binaries.dir}`,
      `--work-dir=${workDir}`,
      `--state-file=${stateFile}`,
      '--uncached=eager',
      // `up --apiserver-arg=--flag=value …`: kube-apiserver flags (the real node's), passed on.
      ...process.argv.slice(3).filter((a) => a.startsWith('--apiserver-arg=')),
    ],
    { detached: true, stdio: ['ignore', log, log] },
  )
  let exited = false
  child.once('exit', () => {
    exited = true
  })
  child.unref()
  const deadline = Date.now() + UP_TIMEOUT_MS
  for (;;) {
    const state = existsSync(stateFile) ? await readState() : undefined
    if (state !== undefined) {
      say(
        `The test control plane is up: kube-apiserver ${state.info.versions.kubernetes} (cached ${state.info.servers.cached}, uncached ${state.info.servers.uncached}), etcd ${state.info.versions.etcd}, ready in ${(state.timings.total / 1000).toFixed(1)} s.`,
      )
      printHowTo(state)
      return 0
    }
    if (exited || Date.now() > deadline) {
      if (!exited) child.kill('SIGTERM')
      const text = await readFile(logFile, 'utf8').catch(() => '')
      process.stderr.write(
        `The control plane did not start. ${logFile}:\n${text.split('\n').slice(-40).join('\n')}\n`,
      )
      return 1
    }
    await delay(POLL_MS)
  }
}

async function down(): Promise<number> {
  const state = await readState()
  if (state === undefined) {
    say('The test control plane is not running.')
    return 0
  }
  if (alive(state.pid, 'supervisor.ts')) {
    process.kill(state.pid, 'SIGTERM')
    const deadline = Date.now() + DOWN_TIMEOUT_MS
    while (alive(state.pid, 'supervisor.ts') && Date.now() < deadline) await delay(POLL_MS)
    if (alive(state.pid, 'supervisor.ts')) process.kill(state.pid, 'SIGKILL')
  }
  await killLeftovers(state)
  say(`The test control plane is stopped (logs kept in ${state.workDir}).`)
  return 0
}

async function status(): Promise<number> {
  const state = await readState()
  if (state === undefined || !alive(state.pid, 'supervisor.ts')) {
    say('The test control plane is not running.')
    return 1
  }
  say(`The test control plane is running (supervisor pid ${state.pid}).`)
  printHowTo(state)
  return 0
}

const command = process.argv[2]
await mkdir(stateDir, { recursive: true, mode: 0o700 })
const commands: Record<string, () => Promise<number>> = { up, down, status }
const run = command === undefined ? undefined : commands[command]
if (run === undefined) {
  process.stderr.write('usage: node test/controlplane/cli.ts up|down|status\n')
  process.exitCode = 2
} else {
  process.exitCode = await run().catch((err: unknown) => {
    process.stderr.write(
      `${err instanceof AssetsUnavailableError || err instanceof Error ? err.message : String(err)}\n`,
    )
    return 1
  })
}
