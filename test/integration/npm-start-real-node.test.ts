/**
 * `npm start -- --real-node` as a user runs it (root): the real node comes up (probe-node.sh:
 * control plane, containerd, kubelet in a namespace of their own), the chart is installed on it,
 * the sample AppService demo/hello is Ready with its database entry; Ctrl-C tears it all down and
 * leaves no process, no cgroup and no file. The start time is reported, not asserted.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { PREPARE_REAL_NODE_TIMEOUT_MS, prepareRealNode } from '../node/assets.ts'
import { type NpmStart, startNpm } from '../support/npm-start-process.ts'
import { processesMarkedBy, type SeenProcess, stillRunning } from '../support/process-tree.ts'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')
/** Environment variable that marks every process of this run (inherited by all of them). */
const MARK = 'EDGEOP_NPM_START_REAL_NODE_MARK'
/** Bounds on waits, not asserted durations: a warm start took 50 to 105 s on a loaded 2-core machine. */
const READY_TIMEOUT_MS = 300_000
/** The probe's tear-down waits up to 30 s for pods kubelet does not stop (the chart's), then removes them. */
const EXIT_TIMEOUT_MS = 180_000

before(prepareRealNode, { timeout: PREPARE_REAL_NODE_TIMEOUT_MS })

const mark = randomBytes(8).toString('hex')
let npm: NpmStart | undefined
let seen: SeenProcess[] = []

after(() => {
  // Only on failure is anything left: stop what this test started, by PID.
  npm?.kill()
  for (const p of processesMarkedBy(MARK, mark)) {
    try {
      process.kill(p.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

test('npm start -- --real-node: the chart on a real kubelet node, demo/hello Ready with its database entry; Ctrl-C leaves no process, cgroup or file', async (t) => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('npm_') && !k.startsWith('NODE_') && k !== 'INIT_CWD') env[k] = v
  const started = performance.now()
  npm = startNpm(['start', '--', '--real-node'], ROOT, {
    ...env,
    PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
    [MARK]: mark,
  })
  const output = npm.output
  await npm.untilOutput(/npm start: real node ready: AppService demo\/hello is Ready/, READY_TIMEOUT_MS)
  t.diagnostic(`real node ready ${Math.round(performance.now() - started)} ms after npm start`)
  const work = /work directory (\S+)/.exec(output())?.[1]
  const cgroupRoot = /cgroup root (\/edgeop-node-\d+)$/m.exec(output())?.[1]
  const enter = /(nsenter --net=\/proc\/\d+\/ns\/net --)/.exec(output())?.[1]
  const dbUrl = /database API stand-in: (http:\/\/\S+)/.exec(output())?.[1]
  assert.ok(work && cgroupRoot && enter && dbUrl, output())
  // What the printed command reaches inside the node's network namespace: the stand-in's entry.
  const { stdout } = await run('bash', ['-c', `${enter} curl -sS ${dbUrl}/v1/databases`])
  const items = (JSON.parse(stdout) as { items: { namespace: string; name: string; state: string }[] }).items
  assert.deepEqual(
    items.map((i) => [i.namespace, i.state]),
    [['demo', 'ready']],
  )
  seen = processesMarkedBy(MARK, mark)
  for (const re of [/\bkubelet --config/, /\bcontainerd --config/, /kube-apiserver /, /demo-on-node\.ts/])
    assert.ok(
      seen.some((p) => re.test(p.command)),
      `${re} runs; seen:\n${seen.map((p) => p.command).join('\n')}`,
    )

  const stopAt = performance.now()
  const end = await npm.ctrlC(EXIT_TIMEOUT_MS)
  assert.ok(end !== undefined, `npm start did not exit within ${EXIT_TIMEOUT_MS} ms; output:\n${npm.tail()}`)
  t.diagnostic(`stopped ${Math.round(performance.now() - stopAt)} ms after Ctrl-C`)
  assert.match(output(), /probe-node: \d+ ms: torn down/)
  assert.match(
    output(),
    /npm start: stopped \(exit code 0\); the node, the control plane and their files are gone/,
  )
  assert.deepEqual(
    seen.filter(stillRunning).map((p) => `${p.pid} ${p.command}`),
    [],
    'processes left running after npm exited',
  )
  assert.equal(existsSync(work), false, `the work directory ${work} is removed`)
  for (const hierarchy of readdirSync('/sys/fs/cgroup'))
    assert.equal(
      existsSync(join('/sys/fs/cgroup', hierarchy, cgroupRoot)),
      false,
      `${hierarchy}${cgroupRoot} is left`,
    )
  assert.deepEqual(end, { code: null, signal: 'SIGINT' }, 'npm re-raises the SIGINT it got')
})
