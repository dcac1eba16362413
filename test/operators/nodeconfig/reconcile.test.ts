import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { ApplyOptions } from '../../../src/client/call-options.ts'
import { ManualClock } from '../../../src/core/clock.ts'
import { noopLogger } from '../../../src/core/log.ts'
import type { KubeObject } from '../../../src/core/types.ts'
import type { NodeConfig, NodeConfigNodeStatus } from '../../../src/operators/nodeconfig/api.ts'
import { FileStore, RECORD_PATH } from '../../../src/operators/nodeconfig/file-store.ts'
import { nodeConfigReconciler } from '../../../src/operators/nodeconfig/reconcile.ts'
import {
  type NodeConfigReport,
  reportBody,
  reportEntry,
} from '../../../src/operators/nodeconfig/report-api.ts'
import {
  REPORT_FIELD_MANAGER,
  STATUS_RESEND_AFTER_MS,
} from '../../../src/operators/nodeconfig/status-reporter.ts'
import { ApiError } from '../../../src/transport/api-error.ts'

const dirs: string[] = []
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/**
 * A fake API server + cache for NodeConfigs and this node's NodeConfigReports: a report is
 * kept as this node's entry of the NodeConfig's `status.nodes` (the shape the tests read),
 * and the cache's reports are made from those entries.
 */
class FakeCluster {
  readonly objects = new Map<string, NodeConfig>()
  readonly applies: { name: string; manager: string; entry: NodeConfigNodeStatus | undefined }[] = []
  readonly events: { name: string; type: string; reason: string; note: string }[] = []
  labels: Record<string, string> | undefined = { role: 'edge' }
  failNextApply: number | undefined
  #rv = 1

  put(
    name: string,
    files: { path: string; content: string; mode?: string }[],
    selector?: Record<string, string>,
  ) {
    const old = this.objects.get(name)
    this.objects.set(name, {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: {
        name,
        uid: old?.metadata.uid ?? `uid-${name}-${this.#rv}`,
        generation: (old?.metadata.generation ?? 0) + 1,
        resourceVersion: String(++this.#rv),
      },
      spec: {
        files: files.map((f) => ({ mode: '0644', ...f })),
        ...(selector ? { nodeSelector: selector } : {}),
      },
      ...(old?.status ? { status: old.status } : {}),
    })
  }

  readonly api = {
    delete: async (reportName: string) => {
      const name = reportName.slice(0, -'.edge-1'.length)
      this.applies.push({ name, manager: REPORT_FIELD_MANAGER, entry: undefined })
      const obj = this.objects.get(name)
      if (obj)
        this.objects.set(name, {
          ...obj,
          status: { nodes: (obj.status?.nodes ?? []).filter((e) => e.name !== 'edge-1') },
        })
      return { kind: 'Status' } as never
    },
    apply: async (body: NodeConfigReport, o: ApplyOptions & { subresource?: string }) => {
      assert.equal(o.subresource, undefined)
      assert.equal(o.force, true)
      const name = body.spec.nodeConfig
      const entry = reportEntry(body)
      this.applies.push({ name, manager: o.fieldManager, entry })
      if (this.failNextApply) {
        const status = this.failNextApply
        this.failNextApply = undefined
        throw Object.assign(new Error(`HTTP ${status}`), { status })
      }
      const obj = this.objects.get(name)
      if (!obj)
        throw new ApiError({
          status: 404,
          reason: 'NotFound',
          message: `nodeconfigs "${name}" not found`,
          method: 'PATCH',
          path: `/apis/platform.example.com/v1alpha1/nodeconfigs/${name}/status`,
        })
      const others = (obj.status?.nodes ?? []).filter((e) => e.name !== 'edge-1')
      const next = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } }
      next.status = { nodes: entry ? [...others, entry] : others }
      this.objects.set(name, next)
      return body
    },
  }

  /** This node's reports as the agent's cache holds them. */
  reports(): NodeConfigReport[] {
    return [...this.objects.values()].flatMap((c) => {
      const e = c.status?.nodes?.find((n) => n.name === 'edge-1')
      if (!e) return []
      const r = reportBody(c, e)
      return [{ ...r, metadata: { ...r.metadata, resourceVersion: c.metadata.resourceVersion } }]
    })
  }

  /** NodeConfigs whose current generation the aggregator has not opened yet (the previous one is). */
  readonly closed = new Set<string>()

  /** The NodeConfigs as the agent's cache holds them: the current generation open to every node, unless closed. */
  configs(): NodeConfig[] {
    return [...this.objects.values()].map((c) => {
      const generation = c.metadata.generation! - (this.closed.has(c.metadata.name!) ? 1 : 0)
      return { ...c, status: { ...c.status, rollout: { generation, percent: 100 } } }
    })
  }

  recorder = {
    event: (o: KubeObject, type: string, reason: string, _action: string, note: string) =>
      void this.events.push({ name: o.metadata.name!, type, reason, note }),
  }
}

async function setup(options: { root?: string } = {}) {
  const root = options.root ?? (await realpath(await mkdtemp(join(tmpdir(), 'edgeop-agent-'))))
  dirs.push(root)
  const cluster = new FakeCluster()
  const clock = new ManualClock(Date.parse('2026-11-29T10:00:00Z'))
  const make = () =>
    nodeConfigReconciler({
      nodeName: 'edge-1',
      getNode: () =>
        cluster.labels === undefined ? undefined : { metadata: { name: 'edge-1', labels: cluster.labels } },
      listNodeConfigs: () => cluster.configs(),
      store: new FileStore(root),
      reports: cluster.api,
      listReports: () => cluster.reports(),
      recorder: cluster.recorder,
      clock,
      recheckIntervalMs: 5_000,
    })
  let reconcile = make()
  const pass = () =>
    reconcile(
      { namespace: undefined, name: 'edge-1' },
      { signal: new AbortController().signal, log: noopLogger, reconcileId: 't' },
    )
  const restart = (): void => {
    reconcile = make()
  }
  return { root, cluster, clock, pass, restart }
}
const entryOf = (c: FakeCluster, name: string) =>
  c.objects.get(name)?.status?.nodes?.find((e) => e.name === 'edge-1')

test('applies selected NodeConfigs, reports under its own field manager, then goes quiet', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('chrony', [{ path: 'etc/chrony.conf', content: 'server ntp\n' }], { role: 'edge' })
  cluster.put('core-only', [{ path: 'etc/core.conf', content: 'x' }], { role: 'core' })
  assert.deepEqual(await pass(), { requeueAfterMs: 5_000 })
  assert.equal(await readFile(join(root, 'etc/chrony.conf'), 'utf8'), 'server ntp\n')
  await assert.rejects(stat(join(root, 'etc/core.conf')), { code: 'ENOENT' })
  assert.deepEqual(cluster.applies, [
    {
      name: 'chrony',
      manager: REPORT_FIELD_MANAGER,
      entry: {
        name: 'edge-1',
        observedGeneration: 1,
        state: 'Applied',
        message: '1 file in place',
        lastTransitionTime: '2026-11-29T10:00:00Z',
      },
    },
  ])
  assert.deepEqual(
    cluster.events.map((e) => [e.name, e.reason, e.note]),
    [['chrony', 'FilesWritten', 'edge-1: wrote etc/chrony.conf']],
  )
  const record = JSON.parse(await readFile(join(root, RECORD_PATH), 'utf8'))
  assert.deepEqual(Object.keys(record.files), ['etc/chrony.conf'])
  assert.equal(record.files['etc/chrony.conf'].uid, cluster.objects.get('chrony')!.metadata.uid)

  const mtime = (await stat(join(root, RECORD_PATH))).mtimeMs
  await pass()
  assert.equal(cluster.applies.length, 1, 'nothing changed: no status write')
  assert.equal(cluster.events.length, 1, 'nothing changed: no event')
  assert.equal((await stat(join(root, RECORD_PATH))).mtimeMs, mtime, 'record not rewritten')
})

test('drift (edited or deleted by hand) is restored on the next pass, with an event but no status write', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('app', [{ path: 'app.conf', content: 'v1' }])
  await pass()
  await writeFile(join(root, 'app.conf'), 'hacked')
  await pass()
  assert.equal(await readFile(join(root, 'app.conf'), 'utf8'), 'v1')
  await rm(join(root, 'app.conf'))
  await pass()
  assert.equal(await readFile(join(root, 'app.conf'), 'utf8'), 'v1')
  assert.deepEqual(
    cluster.events.map((e) => e.reason),
    ['FilesWritten', 'DriftCorrected', 'DriftCorrected'],
  )
  assert.equal(cluster.applies.length, 1)
})

test('a spec change rewrites the file and reports the new generation', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('app', [{ path: 'app.conf', content: 'v1' }])
  await pass()
  cluster.put('app', [{ path: 'app.conf', content: 'v2', mode: '0600' }])
  await pass()
  assert.equal(await readFile(join(root, 'app.conf'), 'utf8'), 'v2')
  assert.equal((await stat(join(root, 'app.conf'))).mode & 0o777, 0o600)
  assert.equal(entryOf(cluster, 'app')?.observedGeneration, 2)
  assert.deepEqual(
    cluster.events.map((e) => e.reason),
    ['FilesWritten', 'FilesWritten'],
  )
})

test('relabelled away: files removed, own status entry removed, other nodes’ entries untouched', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('edge', [{ path: 'a/b/edge.conf', content: 'e' }], { role: 'edge' })
  await pass()
  const obj = cluster.objects.get('edge')!
  cluster.objects.set('edge', {
    ...obj,
    status: { nodes: [...obj.status!.nodes!, { name: 'edge-2', state: 'Applied' }] },
  })
  cluster.labels = { role: 'core' }
  await pass()
  await assert.rejects(stat(join(root, 'a')), { code: 'ENOENT' }, 'emptied directories removed too')
  assert.deepEqual(cluster.applies.at(-1), { name: 'edge', manager: REPORT_FIELD_MANAGER, entry: undefined })
  assert.deepEqual(
    cluster.objects.get('edge')!.status!.nodes!.map((e) => e.name),
    ['edge-2'],
  )
  assert.deepEqual(cluster.events.at(-1), {
    name: 'edge',
    type: 'Normal',
    reason: 'FilesRemoved',
    note: 'edge-1: removed a/b/edge.conf',
  })
  assert.deepEqual(JSON.parse(await readFile(join(root, RECORD_PATH), 'utf8')).files, {})
})

test('deleted while the agent was down: a fresh agent removes the files from its record alone', async () => {
  const { root, cluster, pass, restart } = await setup()
  cluster.put('gone', [{ path: 'gone.conf', content: 'g' }])
  cluster.put('stays', [{ path: 'stays.conf', content: 's' }])
  await pass()
  cluster.objects.delete('gone')
  restart()
  await pass()
  await assert.rejects(stat(join(root, 'gone.conf')), { code: 'ENOENT' })
  assert.equal(await readFile(join(root, 'stays.conf'), 'utf8'), 's')
  assert.ok(cluster.events.some((e) => e.name === 'gone' && e.reason === 'FilesRemoved'))
})

test('a conflict fails both NodeConfigs, each naming the other; a third keeps working', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('first', [{ path: 'shared.conf', content: '1' }])
  await pass()
  cluster.put('second', [{ path: 'shared.conf', content: '2' }])
  cluster.put('third', [{ path: 'third.conf', content: '3' }])
  await pass()
  assert.equal(await readFile(join(root, 'shared.conf'), 'utf8'), '1', 'no silent overwrite')
  assert.equal(await readFile(join(root, 'third.conf'), 'utf8'), '3')
  assert.deepEqual(
    ['first', 'second', 'third'].map((n) => [entryOf(cluster, n)?.state, entryOf(cluster, n)?.message]),
    [
      ['Failed', '"shared.conf" is also claimed by NodeConfig "second"'],
      ['Failed', '"shared.conf" is also claimed by NodeConfig "first"'],
      ['Applied', '1 file in place'],
    ],
  )
  assert.deepEqual(
    cluster.events.filter((e) => e.type === 'Warning').map((e) => e.name),
    ['first', 'second'],
  )
  cluster.objects.delete('second')
  await pass()
  assert.equal(entryOf(cluster, 'first')?.state, 'Applied', 'the conflict resolved, the survivor recovers')
})

test('bad input fails only its own NodeConfig; a symlink escape touches nothing outside', async () => {
  const { root, cluster, pass } = await setup()
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-outside-')))
  dirs.push(outside)
  const { symlink } = await import('node:fs/promises')
  await symlink(outside, join(root, 'escape'))
  cluster.put('big', [{ path: 'big', content: '€'.repeat(90_000) }])
  cluster.put('sneaky', [{ path: 'escape/passwd', content: 'root::0:0' }])
  cluster.put('fine', [{ path: 'fine.conf', content: 'ok' }])
  await pass()
  assert.match(entryOf(cluster, 'big')!.message!, /270000 bytes, over the 262144-byte cap/)
  assert.match(
    entryOf(cluster, 'sneaky')!.message!,
    /escape\/passwd: a parent directory leads outside the root/,
  )
  assert.equal(entryOf(cluster, 'fine')?.state, 'Applied')
  const { readdir } = await import('node:fs/promises')
  assert.deepEqual(await readdir(outside), [])
})

test('an unusable root fails every applying entry with the reason and does not throw', async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-agent-')))
  dirs.push(base)
  await writeFile(join(base, 'file'), '')
  const { cluster, pass } = await setup({ root: join(base, 'file', 'root') })
  cluster.put('a', [{ path: 'a.conf', content: 'secret-content' }])
  cluster.put('unselected', [{ path: 'u.conf', content: 'u' }], { role: 'core' })
  assert.deepEqual(await pass(), { requeueAfterMs: 5_000 })
  assert.equal(entryOf(cluster, 'a')?.state, 'Failed')
  assert.match(entryOf(cluster, 'a')!.message!, /is unusable: ENOTDIR/)
  assert.ok(!entryOf(cluster, 'a')!.message!.includes('secret-content'))
  assert.equal(entryOf(cluster, 'unselected'), undefined)
})

test('no Node object: nothing touched, nothing reported', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('a', [{ path: 'a.conf', content: 'a' }])
  await pass()
  cluster.labels = undefined
  cluster.objects.delete('a')
  await pass()
  assert.equal(await readFile(join(root, 'a.conf'), 'utf8'), 'a')
  assert.equal(cluster.applies.length, 1)
})

test('a status write failure is retried (throws) after the files are in place; a stale cache is not re-sent', async () => {
  const { root, cluster, clock, pass } = await setup()
  cluster.put('a', [{ path: 'a.conf', content: 'a' }])
  cluster.failNextApply = 500
  await assert.rejects(pass(), /HTTP 500/)
  assert.equal(await readFile(join(root, 'a.conf'), 'utf8'), 'a')
  await pass()
  assert.equal(entryOf(cluster, 'a')?.state, 'Applied')
  const writes = cluster.applies.length

  // The cache lags behind our own write: the same report is not sent again.
  const stale = structuredClone(cluster.objects.get('a')!)
  stale.status = {}
  const live = cluster.objects.get('a')!
  cluster.objects.set('a', stale)
  await pass()
  assert.equal(
    cluster.applies.length,
    writes,
    'cache changed (another agent’s write, own entry not there yet): not re-sent at once',
  )
  await clock.advance(STATUS_RESEND_AFTER_MS)
  await pass()
  assert.equal(cluster.applies.length, writes + 1, 'still missing after the wait: written once more')
  cluster.objects.set('a', { ...stale, metadata: { ...stale.metadata } })
  await pass()
  assert.equal(cluster.applies.length, writes + 1, 'same RV as when last sent: not sent again')
  cluster.objects.set('a', live)
})

test('a recorded file now behind a symlink out of the root is forgotten, not removed; a file that cannot be removed yet is kept', async () => {
  const { root, cluster, pass } = await setup()
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-outside-')))
  dirs.push(outside)
  cluster.put('a', [
    { path: 'd/x.conf', content: 'x' },
    { path: 'y.conf', content: 'y' },
  ])
  await pass()
  const recorded = async () => Object.keys(JSON.parse(await readFile(join(root, RECORD_PATH), 'utf8')).files)
  assert.deepEqual(await recorded(), ['d/x.conf', 'y.conf'])

  cluster.objects.delete('a')
  await rm(join(root, 'd'), { recursive: true })
  await writeFile(join(outside, 'x.conf'), 'not ours')
  await symlink(outside, join(root, 'd'))
  await rm(join(root, 'y.conf'))
  await mkdir(join(root, 'y.conf')) // a directory is never removed: the removal fails, and is retried
  await pass()
  assert.equal(await readFile(join(outside, 'x.conf'), 'utf8'), 'not ours')
  assert.deepEqual(await recorded(), ['y.conf'], 'the refused path is dropped; the other stays for a retry')
})

test('a generation not yet open to this node keeps its previous files and report; once opened, it is applied', async () => {
  const { root, cluster, pass } = await setup()
  cluster.put('chrony', [{ path: 'etc/chrony.conf', content: 'v1\n' }])
  await pass()
  assert.equal(entryOf(cluster, 'chrony')?.observedGeneration, 1)
  cluster.closed.add('chrony')
  cluster.put('chrony', [{ path: 'etc/other.conf', content: 'v2\n' }])
  await pass()
  assert.equal(await readFile(join(root, 'etc/chrony.conf'), 'utf8'), 'v1\n', 'the previous file stays')
  await assert.rejects(stat(join(root, 'etc/other.conf')), { code: 'ENOENT' })
  assert.equal(entryOf(cluster, 'chrony')?.observedGeneration, 1, 'the report still says generation 1')
  cluster.closed.delete('chrony')
  await pass()
  await assert.rejects(stat(join(root, 'etc/chrony.conf')), { code: 'ENOENT' })
  assert.equal(await readFile(join(root, 'etc/other.conf'), 'utf8'), 'v2\n')
  assert.equal(entryOf(cluster, 'chrony')?.observedGeneration, 2)
})
