/**
 * `npm start` as a newcomer runs it: through npm, with the project's Node first on PATH (as npm
 * scripts get it), no `KUBECONFIG`, a fresh HOME (so no `~/.kube/config`) and no in-cluster
 * variables. Only the control-plane binaries are handed over (`EDGEOP_TEST_ASSETS`), so the test
 * is about "no kubeconfig", not about rebuilding Kubernetes. It waits until the sample
 * AppService `demo/hello` is Ready (read through the printed KUBECONFIG with our client), then
 * sends SIGINT to npm's process group, as a terminal's Ctrl-C does, and checks that everything
 * `npm start` started is gone by the time npm has exited.
 *
 * "Everything", from what build/start.ts starts:
 * - processes: every process whose environment carries this test's mark (npm, sh, build/start.ts,
 *   the operator, etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok), recorded
 *   while it runs; the test first checks that each of those was seen;
 * - ports: every TCP port any of them listened on (apiserver, etcd client and peer, controller
 *   manager, scheduler, operator metrics and probes, database stand-in), found through their
 *   sockets in /proc; none may still be listening;
 * - files: the private TMPDIR it ran with must be empty (control-plane work dir: certificates,
 *   kubeconfigs, logs) except for npm's own compile cache, and etcd's data directory (on /dev/shm, read from etcd's command line)
 *   must be gone;
 * - shutdown: the operator drains and exits 0 (one Ctrl-C is one signal to it), no teardown error is
 *   printed, and npm ends the way it does after any Ctrl-C: killed by SIGINT, without "npm error".
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { after, before, test } from 'node:test'
import { KubeClient } from '../../src/client/kube-client.ts'
import { loadClusterConfig } from '../../src/config/load.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { resolveBinaries } from '../controlplane/assets.ts'
import { appServiceWhere, condition } from '../support/appservice.ts'
import { type NpmStart, startNpm } from '../support/npm-start-process.ts'
import {
  listeningPortsOf,
  listeningSockets,
  processesMarkedBy,
  type SeenProcess,
  stillRunning,
} from '../support/process-tree.ts'

const ROOT = join(import.meta.dirname, '../..')

/** Environment variable that marks every process of this run (inherited by all of them). */
const MARK = 'EDGEOP_NPM_START_TEST_MARK'

/**
 * Bounds on waits (not asserted durations): a cold start of the control plane plus controllers
 * on a loaded 2-core machine takes up to a few minutes; teardown is bounded by the processes'
 * 10 s stop grace and the operator's shutdown grace period.
 */
const STARTED_TIMEOUT_MS = 240_000
const READY_TIMEOUT_MS = 180_000
const EXIT_TIMEOUT_MS = 120_000

/** The processes build/start.ts must have started (matched against their command lines). */
const EXPECTED = {
  npm: /\bnpm\b/,
  'build/start.ts': /build\/start\.ts/,
  operator: /src\/main\.ts run/,
  etcd: /\/etcd /,
  'kube-apiserver': /\/kube-apiserver /,
  'kube-controller-manager': /\/kube-controller-manager /,
  'kube-scheduler': /\/kube-scheduler /,
  kwok: /\/kwok /,
}

/**
 * What npm itself keeps in TMPDIR across runs: npm's cli.js turns on Node's module compile cache,
 * which lives in `os.tmpdir()/node-compile-cache`. Not started by build/start.ts, and meant to stay.
 */
const NPM_OWN_TMP_ENTRIES = new Set(['node-compile-cache'])

/** Variables that would point npm start at a cluster, the shared test control plane, or change flags. */
function newcomerEnv(home: string, tmp: string, assets: string, mark: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'KUBECONFIG' || k.startsWith('KUBERNETES_')) continue // no cluster, not in-cluster
    if (k.startsWith('EDGEOP_')) continue // test control API, operator flag defaults, caches
    if (k.startsWith('npm_') || k === 'INIT_CWD') continue // not run from inside another npm
    if (k.startsWith('NODE_')) continue // e.g. NODE_TEST_CONTEXT of the test runner
    env[k] = v
  }
  return {
    ...env,
    HOME: home,
    TMPDIR: tmp,
    PATH: [join(ROOT, 'node_modules/.bin'), process.env.PATH ?? ''].join(delimiter),
    EDGEOP_TEST_ASSETS: assets,
    // npm's update check would reach for the registry from a fresh HOME; the test stays offline.
    npm_config_update_notifier: 'false',
    [MARK]: mark,
  }
}

let base: string
let npm: NpmStart | undefined
let seen: SeenProcess[] = []

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'edgeop-npm-start-test-'))
})

after(async () => {
  // Only on failure is anything left: stop what this test started, by PID.
  npm?.kill()
  for (const p of seen.filter(stillRunning)) {
    try {
      process.kill(p.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  await rm(base, { recursive: true, force: true })
})

test('npm start without a kubeconfig: demo/hello becomes Ready, and Ctrl-C leaves nothing behind', async () => {
  const assets = (await resolveBinaries()).dir
  const home = join(base, 'home')
  const tmp = join(base, 'tmp')
  await Promise.all([mkdir(home), mkdir(tmp)])
  const mark = randomBytes(8).toString('hex')

  npm = startNpm(['start'], ROOT, newcomerEnv(home, tmp, assets, mark))
  const { untilOutput, tail } = npm
  const [, kubeconfig] = await untilOutput(/export KUBECONFIG=(\S+)/, STARTED_TIMEOUT_MS)
  assert.ok(kubeconfig?.startsWith(tmp), `the kubeconfig ${kubeconfig} lies in npm start's TMPDIR`)

  const config = await loadClusterConfig({ kubeconfig: kubeconfig!, env: {} })
  const client = new KubeClient(config, { qps: -1 })
  try {
    const hello = await appServiceWhere(
      client.resource(APPSERVICES, 'demo'),
      'hello',
      (a: AppService) => condition(a, 'Ready')?.status === 'True',
      'AppService demo/hello Ready',
      READY_TIMEOUT_MS,
    )
    assert.equal(hello.spec.replicas, 2)
  } finally {
    await client.close()
  }

  // Everything that runs now was started by npm start.
  seen = processesMarkedBy(MARK, mark)
  for (const [name, re] of Object.entries(EXPECTED)) {
    assert.ok(
      seen.some((p) => re.test(p.command)),
      `${name} is running while npm start runs; seen:\n${seen.map((p) => p.command).join('\n')}`,
    )
  }
  const ports = listeningPortsOf(seen)
  const apiserverPort = Number(new URL(config.server).port)
  assert.ok(ports.has(apiserverPort), `the apiserver's port ${apiserverPort} is among ${[...ports.keys()]}`)
  const etcd = seen.find((p) => EXPECTED.etcd.test(p.command))!
  const etcdDataDir = /--data-dir=(\S+)/.exec(etcd.command)?.[1]
  assert.ok(etcdDataDir !== undefined && existsSync(etcdDataDir), `etcd's data dir in ${etcd.command}`)

  // Ctrl-C: SIGINT to every process of the foreground group.
  const end = await npm.ctrlC(EXIT_TIMEOUT_MS)
  assert.ok(
    end !== undefined,
    `npm start did not exit within ${EXIT_TIMEOUT_MS} ms of SIGINT; still running:\n${seen
      .filter(stillRunning)
      .map((p) => p.command)
      .join('\n')}\noutput:\n${tail()}`,
  )

  // The moment npm has exited (the shell prompt is back), nothing may be left.
  const left = seen.filter(stillRunning).map((p) => `${p.pid} ${p.command}`)
  const stillListening = listeningSockets()
    .filter((s) => ports.has(s.port))
    .map((s) => `${s.port} (was ${ports.get(s.port)})`)
  const files = readdirSync(tmp).filter((f) => !NPM_OWN_TMP_ENTRIES.has(f))
  assert.deepEqual(left, [], `processes left running after npm exited; output:\n${tail()}`)
  assert.deepEqual(stillListening, [], 'ports still listening after npm exited')
  assert.deepEqual(files, [], `npm start left files in its TMPDIR ${tmp}`)
  assert.equal(existsSync(etcdDataDir), false, `etcd's data dir ${etcdDataDir} is removed`)

  assert.deepEqual(
    end,
    { code: null, signal: 'SIGINT' },
    `npm re-raises the SIGINT it got; output:\n${tail()}`,
  )
  assert.doesNotMatch(npm.output(), /npm error/, 'npm reports no error')
  // The operator exits 0 only after a drain; a second signal (the terminal's plus a forwarded one)
  // makes it exit at once with 130.
  assert.match(npm.output(), /npm start: stopped \(exit code 0\)/, 'the operator drained and exited 0')
  assert.doesNotMatch(npm.output(), /teardown failed/, 'the control plane is torn down cleanly')
})
