/**
 * An informer with a snapshot, on a scripted ListerWatcher, a ManualClock and a real
 * directory: cold start writes; warm start restores, lists nothing and resumes the watch
 * from the snapshot's resourceVersion; a 410 relists with tombstones; a bad file or a
 * failing write is one warning and the informer goes on.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { SharedInformer } from '../../src/cache/informer.ts'
import type { EventHandler } from '../../src/cache/listener.ts'
import { decodeSnapshot, encodeSnapshot, type SnapshotIdentity } from '../../src/cache/snapshot-format.ts'
import { SNAPSHOT_QUIET_MS } from '../../src/cache/snapshot-schedule.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { FakeStream, list, scripted } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { assertPlain, eachStore, storeMode, withStore } from '../support/stores.ts'

const ID: SnapshotIdentity = {
  resource: '/v1/configmaps',
  namespace: 'ns',
  labelSelector: '',
  fieldSelector: '',
  metadataOnly: false,
  tag: 't',
}
const cm = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv },
  data: { v: name },
})
const GONE = { type: 'ERROR', object: { kind: 'Status', code: 410, metadata: {} } } as const

let dir = ''
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-snapinf-'))
})
after(() => rm(dir, { recursive: true, force: true }))

function recorder(seen: string[]): EventHandler {
  return {
    onAdd: (o, initial) =>
      assertPlain(o) ?? void seen.push(`add ${o.metadata.name}${initial ? ' (initial)' : ''}`),
    onUpdate: (_a, b) => void seen.push(`update ${b.metadata.name}`),
    onDelete: (o, info) =>
      assertPlain(o) ??
      void seen.push(`delete ${o.metadata.name}${info.finalStateUnknown ? ' (stale)' : ''}`),
  }
}

function start(
  path: string,
  lists: ReturnType<typeof list>[],
  streams: FakeStream[],
  streaming: 'auto' | 'off' = 'off',
) {
  const lw = scripted([...lists], [...streams])
  const clock = new ManualClock()
  const logger = recordingLogger(['warn'])
  const source = withStore(lw)
  const informer = new SharedInformer(source.lw, {
    streaming,
    clock,
    logger,
    snapshot: { path, identity: ID },
    ...source.store,
  })
  const seen: string[] = []
  informer.addEventHandler(recorder(seen))
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  const stop = (): Promise<void> => {
    ac.abort()
    return done
  }
  return { lw, clock, logger, informer, seen, stop }
}

eachStore(
  'cold start: lists, then writes the store and its resourceVersion once the cache is quiet',
  async () => {
    const path = join(dir, `cold-${storeMode()}.snapshot`)
    const stream = new FakeStream()
    const t = start(path, [list('10', cm('a', '1'), cm('b', '2'))], [stream])
    await t.informer.whenSynced()
    stream.push({ type: 'MODIFIED', object: cm('a', '11') })
    await until(() => t.informer.store.get('ns/a')?.metadata.resourceVersion === '11')
    await assert.rejects(readFile(path), /ENOENT/, 'nothing written before the quiet time')
    await t.clock.advance(SNAPSHOT_QUIET_MS)
    const bytes = await eventually(() => readFile(path).catch(() => undefined), {
      timeoutMs: 10_000,
      what: 'the snapshot file',
    })
    const r = decodeSnapshot(bytes, ID)
    assert.ok(!('problem' in r))
    assert.equal(r.resourceVersion, '11')
    assert.deepEqual(r.objects.map((o) => o.metadata.name).sort(), ['a', 'b'])
    assert.deepEqual(t.logger.lines, [])
    await t.stop()
  },
)

eachStore(
  'warm start: restored objects are initial adds, the state is restored (not synced), the watch resumes at the RV and nothing is listed',
  async () => {
    const path = join(dir, `warm-${storeMode()}.snapshot`)
    await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40'), cm('b', '41')]))
    const stream = new FakeStream()
    const t = start(path, [], [stream], 'auto')
    await t.informer.whenRestored()
    assert.equal(t.informer.syncState(), 'restored')
    assert.equal(t.informer.hasSynced(), false, 'a snapshot is not proof of the server state')
    assert.deepEqual(t.seen, ['add a (initial)', 'add b (initial)'])
    assert.ok(Object.isFrozen(t.informer.store.get('ns/a')), 'restored objects are frozen like listed ones')
    assert.notEqual(t.informer.health().servingFromSnapshotSince, undefined)
    await until(() => t.lw.calls.length === 2)
    assert.deepEqual(t.lw.calls[0], { kind: 'list', request: { limit: 1 } }, 'one object: the server version')
    const call = t.lw.calls[1]!
    assert.equal(call.kind, 'watch')
    assert.equal(call.kind === 'watch' && call.call.resourceVersion, '42')
    assert.equal(
      call.kind === 'watch' && call.call.sendInitialEvents,
      undefined,
      'a plain watch, not a streaming list',
    )
    stream.push({ type: 'DELETED', object: cm('b', '43') })
    stream.push({ type: 'ADDED', object: cm('c', '44') })
    await until(() => t.seen.length === 4)
    assert.deepEqual(t.seen.slice(2), ['delete b', 'add c'])
    assert.equal(t.informer.syncState(), 'restored', 'an event is no proof of having caught up')
    assert.notEqual(t.informer.health().servingFromSnapshotSince, undefined)
    assert.equal(t.informer.health().resourceVersion, '44')
    await t.stop()
    const r = decodeSnapshot(await readFile(path), ID)
    assert.ok(!('problem' in r))
    assert.equal(r.resourceVersion, '44', 'written at shutdown')
    assert.deepEqual(r.objects.map((o) => o.metadata.name).sort(), ['a', 'c'])
  },
)

eachStore('the first bookmark of the resumed watch makes a restored informer synced', async () => {
  const path = join(dir, `bookmark-${storeMode()}.snapshot`)
  await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40')]))
  const stream = new FakeStream()
  const t = start(path, [], [stream])
  await until(() => t.lw.calls.length === 2)
  assert.notEqual(t.informer.health().servingFromSnapshotSince, undefined)
  assert.equal(t.informer.syncState(), 'restored')
  let synced = false
  void t.informer.whenSynced().then(() => {
    synced = true
  })
  stream.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '50' } } })
  await until(() => synced)
  assert.equal(t.informer.health().resourceVersion, '50')
  assert.equal(t.informer.syncState(), 'synced')
  assert.equal(t.informer.health().servingFromSnapshotSince, undefined)
  assert.equal(t.informer.health().syncState, 'synced')
  await t.stop()
})

eachStore(
  'a quiet collection gets no bookmark: the restored informer is synced once its watch reached the version of a limit=1 list',
  async () => {
    const path = join(dir, `quiet-${storeMode()}.snapshot`)
    await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40'), cm('b', '41')]))
    const stream = new FakeStream()
    const t = start(path, [list('44')], [stream])
    await until(() => t.lw.calls.length === 2)
    stream.push({ type: 'DELETED', object: cm('b', '43') })
    await until(() => t.seen.length === 3)
    assert.equal(t.informer.syncState(), 'restored', 'version 43 is older than the server (44)')
    stream.push({ type: 'MODIFIED', object: cm('a', '44') })
    await t.informer.whenSynced()
    assert.deepEqual(t.seen.slice(2), ['delete b', 'update a'])
    await t.stop()
  },
)

eachStore(
  'a snapshot already as new as the server is synced at the limit=1 list, without any event',
  async () => {
    const path = join(dir, `current-${storeMode()}.snapshot`)
    await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40')]))
    const t = start(path, [list('42')], [new FakeStream()])
    await t.informer.whenSynced()
    assert.equal(t.informer.health().servingFromSnapshotSince, undefined)
    await t.stop()
  },
)

eachStore(
  'a handler that accepts restored data syncs on the snapshot; one that does not waits for the first bookmark',
  async () => {
    const path = join(dir, `levels-${storeMode()}.snapshot`)
    await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40')]))
    const written = new Date('2026-01-02T03:04:05Z')
    await utimes(path, written, written)
    const stream = new FakeStream()
    const t = start(path, [], [stream])
    const trusting = t.informer.addEventHandler({}, { acceptRestored: true })
    const strict = t.informer.addEventHandler({})
    await trusting.whenSynced()
    assert.equal(strict.hasSynced(), false)
    assert.equal(t.informer.health().syncState, 'restored')
    assert.equal(t.informer.health().snapshotTakenAt, written.getTime(), 'the snapshot file was written then')
    stream.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '50' } } })
    await strict.whenSynced()
    assert.equal(t.informer.health().snapshotTakenAt, undefined)
    await t.stop()
  },
)

eachStore('410 on the resumed watch: relist, and vanished objects are delivered as tombstones', async () => {
  const path = join(dir, `gone-${storeMode()}.snapshot`)
  await writeFile(path, encodeSnapshot(ID, '42', [cm('a', '40'), cm('b', '41')]))
  const first = new FakeStream()
  // The server version (a limit=1 list) is past every event the watch delivers before the 410.
  const t = start(path, [list('95'), list('90', cm('a', '40'), cm('c', '80'))], [first, new FakeStream()])
  await until(() => t.lw.calls.length === 2)
  first.push(GONE)
  await until(() => t.clock.pending > 0)
  await t.clock.advance(60_000)
  await until(() => t.seen.length === 4)
  assert.deepEqual(t.seen, ['add a (initial)', 'add b (initial)', 'delete b (stale)', 'add c'])
  assert.deepEqual(
    t.lw.calls.map((c) => c.kind),
    ['list', 'watch', 'list', 'watch'],
  )
  assert.equal(t.informer.health().servingFromSnapshotSince, undefined)
  assert.equal(t.informer.syncState(), 'synced', 'a fresh list is the server state')
  await t.stop()
})

eachStore(
  'a corrupt, foreign or unreadable snapshot: one warning, a cold start, and it is overwritten later',
  async () => {
    const good = encodeSnapshot(ID, '42', [cm('a', '40')])
    const cases: [string, Buffer | 'dir'][] = [
      ['truncated', good.subarray(0, good.length - 10)],
      ['foreign', encodeSnapshot({ ...ID, namespace: 'other' }, '42', [cm('a', '40')])],
      ['unreadable', 'dir'],
    ]
    for (const [name, content] of cases) {
      const path = join(dir, `${name}-${storeMode()}.snapshot`)
      if (content === 'dir') await mkdir(path)
      else await writeFile(path, content)
      const t = start(path, [list('10', cm('z', '9'))], [new FakeStream()])
      await t.informer.whenSynced()
      assert.deepEqual(t.seen, ['add z (initial)'], name)
      assert.equal(t.lw.calls[0]!.kind, 'list', name)
      assert.equal(t.logger.lines.length, 1, name)
      assert.equal(t.logger.lines[0]!.msg, 'cache snapshot not used; starting cold')
      await t.stop()
      if (content !== 'dir') {
        const r = decodeSnapshot(await readFile(path), ID)
        assert.ok(!('problem' in r) && r.resourceVersion === '10', `${name}: rewritten at shutdown`)
      }
    }
  },
)

eachStore(
  'a write that fails (no such directory): one warning, a failure count, and the informer goes on',
  async () => {
    const path = join(dir, 'missing-dir', 'x.snapshot')
    const stream = new FakeStream()
    const t = start(path, [list('10', cm('a', '1'))], [stream])
    await t.informer.whenSynced()
    await t.clock.advance(SNAPSHOT_QUIET_MS)
    await until(() => t.informer.health().snapshotWriteFailures === 1)
    stream.push({ type: 'ADDED', object: cm('b', '2') })
    await until(() => t.informer.store.size === 2)
    await t.stop()
    assert.equal(t.informer.health().snapshotWriteFailures, 2, 'retried at shutdown')
    assert.deepEqual(
      t.logger.lines.map((l) => l.msg),
      ['cache snapshot not written; going on without it'],
    )
  },
)

/** A snapshot whose checksum is right but whose lines are `objects` as given (not what encodeSnapshot would check). */
function checksummed(objects: unknown[]): Buffer {
  const header = JSON.stringify({ format: 1, ...ID, resourceVersion: '42', count: objects.length })
  const body = Buffer.from(`${[header, ...objects.map((o) => JSON.stringify(o))].join('\n')}\n`)
  return Buffer.concat([body, Buffer.from(`sha256:${createHash('sha256').update(body).digest('hex')}\n`)])
}

eachStore(
  'D8: a snapshot with a valid checksum but a null or misshapen object gives one warning naming the file and a cold start',
  async () => {
    const cases: [string, unknown, RegExp][] = [
      // A compact store scans the line's bytes: its scanner names what it expected where.
      ['null', null, /^object 2: (is null, not an object|malformed JSON at byte 0)/],
      ['array', [1], /^object 2: (is an array|malformed JSON at byte 0)/],
      ['string', 'x', /^object 2: (is a string|malformed JSON at byte 0)/],
      ['no-metadata', { kind: 'ConfigMap' }, /^object 2: metadata/],
      ['null-metadata', { metadata: null }, /^object 2: (metadata|malformed JSON at byte 12)/],
      ['no-name', { metadata: { namespace: 'ns' } }, /^object 2: metadata.name/],
      ['numeric-name', { metadata: { name: 5 } }, /^object 2: (malformed JSON at byte 20: )?metadata.name/],
      [
        'bad-labels',
        { metadata: { name: 'q', labels: { a: 1 } } },
        /^object 2: (malformed JSON at byte [0-9]+: )?metadata.labels/,
      ],
    ]
    for (const [name, bad, problem] of cases) {
      const path = join(dir, `d8-${name}-${storeMode()}.snapshot`)
      await writeFile(path, checksummed([cm('a', '40'), bad]))
      const t = start(path, [list('10', cm('z', '9'))], [new FakeStream()])
      await t.informer.whenSynced()
      assert.deepEqual(t.seen, ['add z (initial)'], name)
      assert.equal(t.lw.calls[0]!.kind, 'list', name)
      assert.equal(t.logger.lines.length, 1, name)
      const line = t.logger.lines[0]!
      assert.equal(line.msg, 'cache snapshot not used; starting cold', name)
      assert.equal(line.fields?.snapshot, path, `${name}: the warning names the file`)
      assert.match(String(line.fields?.problem), problem, name)
      await t.stop()
    }
  },
)

eachStore('D9: a FIFO at the snapshot path gives a warning and a cold start', async () => {
  const path = join(dir, `d9-fifo-${storeMode()}.snapshot`)
  execFileSync('mkfifo', [path])
  const t = start(path, [list('10', cm('z', '9'))], [new FakeStream()])
  await t.informer.whenSynced()
  assert.deepEqual(t.seen, ['add z (initial)'])
  assert.equal(t.lw.calls[0]!.kind, 'list')
  assert.equal(t.logger.lines.length, 1)
  assert.equal(t.logger.lines[0]!.msg, 'cache snapshot not used; starting cold')
  assert.match(String(t.logger.lines[0]!.fields?.problem), /is a FIFO, not a regular file/)
  assert.equal(t.logger.lines[0]!.fields?.snapshot, path)
  await t.stop()
})
