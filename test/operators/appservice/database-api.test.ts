/**
 * The database API client against the in-process stand-in (no control plane): reading back after
 * a timeout that followed a commit, async provisioning, and the fence refusing a lower token.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { databaseApi } from '../../../src/operators/appservice/database-api.ts'
import { startDatabaseStandin } from '../../standin/database-api.ts'

const ENTRY = { name: 'ns-web', namespace: 'ns', class: 'small' }

/**
 * The call deadline of the commit-then-hang tests: long enough that the stand-in has certainly
 * received and committed the write before it (200 ms failed on a loaded 2-core machine, the
 * deadline firing before the request arrived), short enough to keep the tests quick.
 */
const COMMIT_THEN_HANG_DEADLINE_MS = 2000

test('a create answered after the commit times out; reading back by key finds it, so no second create', async (t) => {
  const db = await startDatabaseStandin()
  t.after(() => db.close())
  const api = databaseApi(db.url, COMMIT_THEN_HANG_DEADLINE_MS)
  db.commitThenHang(1)
  await assert.rejects(api.create('k1', ENTRY), { code: 'EDGEOP_ERR_TIMEOUT', retryable: true })
  assert.deepEqual(db.created, ['k1'], 'the service applied it')
  assert.deepEqual(await api.get('k1'), { ...ENTRY, key: 'k1', state: 'ready' })
  assert.deepEqual(db.created, ['k1'])
})

test('without the read back a retried create provisions a second database (what the read back prevents)', async (t) => {
  const db = await startDatabaseStandin()
  t.after(() => db.close())
  const api = databaseApi(db.url, COMMIT_THEN_HANG_DEADLINE_MS)
  db.commitThenHang(1)
  await api.create('k1', ENTRY).catch(() => undefined)
  await api.create('k1', ENTRY)
  assert.deepEqual(db.created, ['k1', 'k1'])
})

test('an absent entry reads back as undefined', async (t) => {
  const db = await startDatabaseStandin()
  t.after(() => db.close())
  assert.equal(await databaseApi(db.url).get('nope'), undefined)
})

test('async provisioning: create returns a task that runs, then succeeds', async (t) => {
  const db = await startDatabaseStandin()
  t.after(() => db.close())
  db.provisionMs = 60_000
  const api = databaseApi(db.url)
  const rec = await api.create('k1', ENTRY)
  assert.equal(rec.state, 'provisioning')
  assert.ok(rec.task)
  const task = await api.task(rec.task)
  assert.equal(task?.state, 'running')
  assert.equal(await api.task('unknown'), undefined)
})

test('the fence: a write with a lower token than one seen for its key is refused and changes nothing', async (t) => {
  const db = await startDatabaseStandin()
  t.after(() => db.close())
  const api = databaseApi(db.url)
  await api.create('k1', ENTRY, { fencingToken: 2 })
  await assert.rejects(api.remove('k1', { fencingToken: 1 }), { code: 'EDGEOP_ERR_LEADER', retryable: false })
  assert.ok(db.entries.has('k1'), 'the deposed writer removed nothing')
  await api.remove('k1', { fencingToken: 2 })
  assert.equal(db.entries.has('k1'), false)
  assert.equal(db.fence, 2)
  // Per key: another entry's writer (a sharded owner) has its own tokens.
  await api.create('k2', ENTRY, { fencingToken: 1 })
  assert.ok(db.entries.has('k2'))
})

test('unavailability is retryable: 503 and an unreachable service', async (t) => {
  const db = await startDatabaseStandin()
  db.failNext(1)
  await assert.rejects(databaseApi(db.url).get('k'), { code: 'EDGEOP_ERR_NETWORK', retryable: true })
  await db.close()
  await assert.rejects(databaseApi(db.url).get('k'), { code: 'EDGEOP_ERR_NETWORK', retryable: true })
  t.diagnostic('closed stand-in refused the connection')
})
