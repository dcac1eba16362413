/**
 * A real node, not KWOK: test/node/probe-node.sh brings up the project's control plane, containerd
 * with the CRI and the CNI bridge, and kubelet (all built by test/node/build-binaries.sh) inside a
 * network and mount namespace of its own, imports the images from dist/image with no registry, runs
 * two static pods of the operator's image, reports; then test/node/chart-on-node.ts installs the
 * chart exactly as shipped (`helm install`, chart defaults) and drives it on that node; the probe
 * tears everything down. A second node does the same with test/node/kustomize-on-node.ts, which
 * installs config/default (docs/real-node.md).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, cp, mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { promisify } from 'node:util'
import { PREPARE_REAL_NODE_TIMEOUT_MS, prepareRealNode } from '../node/assets.ts'
import { memoryBytes } from '../node/quantity.ts'
import { helmTemplate } from '../support/rendered-manifests.ts'
import { scratchDirs } from '../support/scratch.ts'

const run = promisify(execFile)
const scratch = scratchDirs('edgeop-real-node-')
const PROBE = new URL('../node/probe-node.sh', import.meta.url).pathname

/** Both probe runs, with their suites: 443 s at a load average of 38; a bound, not a measurement. */
const PROBES_TIMEOUT_MS = 1_800_000
/** How long the probe waits for the Node to be Ready (it was 4 to 8 s after kubelet's start). */
const READY_WAIT_S = 120

before(prepareRealNode, { timeout: PREPARE_REAL_NODE_TIMEOUT_MS })

/** What chart-on-node.ts found, by step (`e2e: <step> <JSON>` lines). */
function findings(stdout: string): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>()
  for (const m of stdout.matchAll(/^e2e: (.+?) (\{.*\})$/gm))
    out.set(m[1]!, [...(out.get(m[1]!) ?? []), JSON.parse(m[2]!)])
  return out
}

/**
 * Runs the probe with `then` (a script of test/node) on the Ready node; its stdout, with the error
 * if it failed. A failed run's logs (kubelet, containerd, the control plane's, the pods') are kept
 * in a directory the output names, since the scratch directory goes with the test.
 */
async function probe(then: string): Promise<string> {
  const dir = await scratch()
  const r = await run('bash', [PROBE, String(READY_WAIT_S)], {
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, EDGEOP_NODE_PROBE_DIR: dir, EDGEOP_NODE_THEN: `${process.execPath} ${then}` },
  }).catch((err: { stdout?: string; message: string }) => ({
    stdout: `${err.stdout ?? ''}\n${err.message}`,
    failed: true,
  }))
  if (!('failed' in r)) return r.stdout
  const kept = await mkdtemp(join(tmpdir(), 'edgeop-real-node-failed-'))
  await cp(dir, kept, {
    recursive: true,
    filter: (src) => !/\/(containerd|kubelet|pause)$|\.(tar|sock|ttrpc)$/.test(src),
  })
  return `${r.stdout}\nthe node's logs are kept in ${kept}`
}

/** The probe with the chart's suite; then a node of its own for config/default, the same names. */
let stdout = ''
let kustomizeStdout = ''
/** Wall time of each probe run, reported. */
const probeMs = { chart: 0, kustomize: 0 }
before(
  async () => {
    let t = performance.now()
    stdout = await probe('test/node/chart-on-node.ts')
    probeMs.chart = Math.round(performance.now() - t)
    t = performance.now()
    kustomizeStdout = await probe('test/node/kustomize-on-node.ts')
    probeMs.kustomize = Math.round(performance.now() - t)
  },
  { timeout: PROBES_TIMEOUT_MS },
)

test('kubelet registers a Ready node and runs static pods of the image from the OCI layout: `version` Succeeded with its line, an idle pod Running on the CNI bridge at its memory limit; all torn down', async (t) => {
  t.diagnostic(
    `the node with the chart's suite: ${probeMs.chart} ms; the node with config/default: ${probeMs.kustomize} ms`,
  )
  assert.match(stdout, /probe-node: \d+ ms: node edgeop-node Ready=True$/m, stdout)
  assert.match(stdout, /edgeop-version-edgeop-node=Succeeded/, stdout)
  assert.match(stdout, /edgeop-idle-edgeop-node=Running@10\.88\.\d+\.\d+/, stdout)
  assert.match(
    stdout,
    /version pod's log: \S+ stdout F edgeop \d+\.\d+\.\d+ \(node v24\.[^,]*, linux\/(?:x64|arm64), --optimize-for-size\)$/m,
    stdout,
  )
  for (const limit of ['64Mi', '384Mi'])
    assert.match(stdout, new RegExp(`memory limit ${memoryBytes(limit)}$`, 'm'), stdout)
  assert.match(stdout, /probe-node: \d+ ms: torn down/, stdout)
  // cgroup v1 is not namespaced: the kubelet's tree went into the machine's hierarchies, and is gone.
  const root = /cgroup root (\/edgeop-node-\d+)$/m.exec(stdout)?.[1]
  assert.ok(root, stdout)
  for (const hierarchy of await readdir('/sys/fs/cgroup'))
    await assert.rejects(access(join('/sys/fs/cgroup', hierarchy, root)), `${hierarchy}${root} is left`)
})

/** The checks of test/node/install-checks.ts: pods Ready by kubelet with one leader, an AppService's pods running. */
function assertRuns(out: string): void {
  const e2e = findings(out)
  assert.equal(e2e.get('failed'), undefined, out)
  const operator = e2e.get('operator pods')?.[0]?.pods as { phase: string; ready: boolean; ip: string }[]
  assert.equal(operator?.length, 2, out)
  for (const p of operator) {
    assert.equal(p.phase, 'Running')
    assert.equal(p.ready, true, 'Ready by the readiness probe, which kubelet runs')
    assert.match(p.ip, /^10\.88\./, 'a pod IP on the CNI bridge')
  }
  const leader = e2e.get('leader')![0]!
  assert.equal(leader.lease, 'edgeop-appservice')
  assert.ok(
    (leader.pods as string[]).some((p) => String(leader.holder).startsWith(`${p}_`)),
    'one of the two leads',
  )
  const apps = e2e.get('appservice pods')![0]!
  assert.equal(apps.deployment, 'hello')
  assert.deepEqual(
    (apps.pods as { phase: string }[]).map((p) => p.phase),
    ['Running', 'Running'],
  )
}

/** The validating webhook's denial, reached through the webhook Service, in the words the user reads. */
function assertDenial(out: string): void {
  const denial = findings(out).get('webhook denial')?.[0]
  assert.equal(denial?.status, 422, out)
  assert.match(
    String(denial?.message),
    /admission webhook "validate\.appservices\.platform\.example\.com" denied the request: spec\.image "Not An\/Image!" is not a valid image reference/,
  )
}

test('the chart installed with its defaults runs on the node: two operator pods Running and Ready by kubelet, one leader, an AppService whose pods run', () => {
  assertRuns(stdout)
})

test('a webhook denial reaches the client through the webhook Service, in the words the user reads', () => {
  assertDenial(stdout)
})

test('config/default (kustomize build, applied server-side as shipped) runs on the node: two operator pods Ready by kubelet, one leader, an AppService whose pods run, a webhook denial through the Service', (t) => {
  const e2e = findings(kustomizeStdout)
  assert.ok(e2e.get('applied'), kustomizeStdout)
  assertRuns(kustomizeStdout)
  assertDenial(kustomizeStdout)
  const at = (step: string) => e2e.get(step)?.[0]?.at
  t.diagnostic(
    `config/default: applied at ${at('applied')} ms, operator pods Ready at ${at('operator pods')} ms, the AppService's pods at ${at('appservice pods')} ms, done at ${at('done')} ms`,
  )
})

/** No database entry missing, extra or created twice (test/node/rollout-restart.ts's findings). */
function assertOneEntryEach(db: Record<string, unknown> | undefined, out: string): void {
  assert.ok(db, out)
  assert.deepEqual(
    { missing: db.missing, extra: db.extra, createdTwice: db.createdTwice },
    { missing: [], extra: [], createdTwice: [] },
  )
  assert.equal(db.entries, db.appServicesWithDatabase)
  assert.equal(db.creates, db.entries, 'each entry created once')
}

test('kubectl rollout restart: each old replica stops gracefully on SIGTERM (the leader releases its Lease); the AppServices created and changed meanwhile are all reconciled, and the database holds exactly one entry per AppService', (t) => {
  const e2e = findings(stdout)
  const restart = e2e.get('rollout restart')?.[0]
  assert.ok(restart, stdout)
  const stops = restart.stops as { wasLeader: boolean; releasedLease: boolean; last: string }[]
  assert.equal(stops.length, 2)
  for (const s of stops)
    assert.equal(s.last, 'stopped', 'the last log line is the graceful stop, not a SIGKILL')
  assert.deepEqual(
    stops.filter((s) => s.wasLeader).map((s) => s.releasedLease),
    [true],
  )
  assert.equal((restart.newPods as string[]).length, 2)
  assert.deepEqual(restart.refused, [], 'no write refused while the replicas hand over')
  assert.ok(Number(restart.created) >= 1, 'AppServices created during the restart')
  const db = e2e.get('database after restart')?.[0]
  assertOneEntryEach(db, stdout)
  // db-before, hello (its database enabled during the restart) and those created meanwhile.
  assert.equal(db?.appServicesWithDatabase, 2 + Number(restart.created))
  t.diagnostic(
    `rollout restart: ${restart.created} AppServices created during it, new pods Ready ${restart.handoverMs} ms after the restart; database: ${db?.entries} entries, ${db?.creates} creates`,
  )
})

test("the leader's container killed: a new leader, kubelet restarts the container, still one database entry per AppService (the time is reported, not asserted)", (t) => {
  const e2e = findings(stdout)
  const takeover = e2e.get('takeover')?.[0]
  assert.ok(takeover, stdout)
  assert.notEqual(takeover.leader, takeover.killed)
  t.diagnostic(`takeover after ${takeover.afterMs} ms (documented bound ${takeover.boundMs} ms)`)
  assert.ok(Number(e2e.get('restarted')?.[0]?.restartCount) >= 1)
  assertOneEntryEach(e2e.get('database after takeover')?.[0], stdout)
})

test('operator scaled to 0, failurePolicy Fail: an AppService write is refused naming the webhook and "no endpoints available", a v1alpha1 read (the chart CRD stores v1beta1) fails the same way; with Ignore a v1beta1 write is stored unvalidated', () => {
  const e2e = findings(stdout)
  const down = e2e.get('write with the operator at 0')?.[0]
  assert.equal(down?.status, 500, stdout)
  assert.match(
    String(down?.message),
    /failed calling webhook "validate\.appservices\.platform\.example\.com": .*no endpoints available for service "edgeop-appservice-webhook"/,
  )
  assert.match(
    String(e2e.get('v1alpha1 read with the operator at 0')?.[0]?.message),
    /conversion webhook for platform\.example\.com\/v1beta1, Kind=AppService failed: .*no endpoints available/,
  )
  assert.equal(e2e.get('write with Ignore and the operator at 0')?.[0]?.stored, 'Not An/Image!')
})

test('the agent DaemonSet (agent.enabled=true) writes its file on the host path; killed with the apiserver out of reach, restarted by kubelet, it serves its last files from the cache hostPath', () => {
  const e2e = findings(stdout)
  assert.equal(e2e.get('agent')?.[0]?.file, 'from the cluster\n', stdout)
  const offline = e2e.get('agent offline')?.[0]
  assert.ok(offline, stdout)
  assert.ok(Number(offline.restarts) >= 1)
  assert.equal(offline.file, 'from the cluster\n', 'the file deleted by hand is written again')
  assert.equal(offline.servedFromSnapshot, true, 'the restarted agent loaded its snapshot')
  assert.equal(offline.apiserverRefused, true, 'while the apiserver was out of its reach')
  assert.equal(offline.driftCorrected, true)
})

test("each pod's memory from its cgroup: the operator's under the chart's request, its limit the chart's", async () => {
  const chart = await helmTemplate('edgeop', 'edgeop-system')
  const deployment = chart.find((o) => o.kind === 'Deployment') as unknown as {
    spec: {
      template: {
        spec: { containers: { resources: { requests: { memory: string }; limits: { memory: string } } }[] }
      }
    }
  }
  const { requests, limits } = deployment.spec.template.spec.containers[0]!.resources
  const memory = findings(stdout).get('memory') ?? []
  const operator = memory.filter((m) => String(m.pod).startsWith('edgeop-appservice-'))
  assert.equal(operator.length, 2, stdout)
  for (const m of operator) {
    assert.equal(m.limit, memoryBytes(limits.memory), "the cgroup limit is the chart's")
    assert.equal(m.requests, requests.memory)
    assert.ok(
      Number(m.workingSet) > 0 && Number(m.workingSet) < memoryBytes(requests.memory),
      `${m.pod}: ${m.workingSet} bytes`,
    )
  }
})
