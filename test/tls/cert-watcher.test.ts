import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { CERT_RELOAD_INTERVAL_MS, watchCertificate } from '../../src/tls/cert-watcher.ts'
import { selfSignedCertificate } from '../../src/tls/self-signed-cert.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const dirs: string[] = []
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))))
async function certDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'edgeop-certs-'))
  dirs.push(d)
  return d
}
const write = async (dir: string, pair: { cert: string; key: string }) => {
  await writeFile(join(dir, 'tls.crt'), pair.cert)
  await writeFile(join(dir, 'tls.key'), pair.key)
}
const serial = (pem: string) => new X509Certificate(pem).serialNumber

test('a rewritten pair is taken at the next poll; an unchanged one is not reported', async () => {
  const dir = await certDir()
  const first = selfSignedCertificate()
  await write(dir, first)
  const clock = new ManualClock()
  const log = recordingLogger()
  const seen: string[] = []
  const w = await watchCertificate({ dir, clock, logger: log }, (p) => seen.push(serial(p.cert)))
  assert.equal(serial(w.current.cert), serial(first.cert))
  await clock.advance(CERT_RELOAD_INTERVAL_MS)
  // Joins the poll that advance started (its reads are real I/O), so the rewrite below cannot race it.
  assert.equal(await w.reload(), false)
  assert.deepEqual(seen, [])
  const second = selfSignedCertificate()
  await write(dir, second)
  assert.equal(await w.reload(), true)
  assert.deepEqual(seen, [serial(second.cert)])
  assert.equal(serial(w.current.cert), serial(second.cert))
  assert.match(log.lines.at(-1)!.msg, /reloaded/)
  assert.ok(!JSON.stringify(log.lines).includes('PRIVATE KEY'), 'no key material in the log')
  w.stop()
  assert.equal(clock.pending, 0, 'stop cancels the poll')
})

test('the poll picks the change up on its own', { timeout: 10_000 }, async () => {
  const dir = await certDir()
  await write(dir, selfSignedCertificate())
  const clock = new ManualClock()
  let changed!: (serial: string) => void
  const seen = new Promise<string>((resolve) => (changed = resolve))
  const w = await watchCertificate({ dir, clock, intervalMs: 1000 }, (p) => changed(serial(p.cert)))
  const next = selfSignedCertificate()
  await write(dir, next)
  await clock.advance(999)
  await clock.advance(1)
  // The poll's file reads are real I/O: wait for its outcome, not for time.
  assert.equal(await seen, serial(next.cert))
  w.stop()
})

test('a certificate file caught empty mid-rewrite is not taken', async () => {
  const dir = await certDir()
  const first = selfSignedCertificate()
  await write(dir, first)
  const w = await watchCertificate({ dir, clock: new ManualClock() }, () => assert.fail('no change'))
  await writeFile(join(dir, 'tls.crt'), '')
  assert.equal(await w.reload(), false)
  assert.equal(serial(w.current.cert), serial(first.cert))
  w.stop()
})

test('a half-written rotation (key of another certificate) keeps the old pair and is retried', async () => {
  const dir = await certDir()
  const first = selfSignedCertificate()
  await write(dir, first)
  const log = recordingLogger()
  const w = await watchCertificate({ dir, clock: new ManualClock(), logger: log }, () => {})
  const second = selfSignedCertificate()
  await writeFile(join(dir, 'tls.crt'), second.cert)
  assert.equal(await w.reload(), false)
  assert.equal(serial(w.current.cert), serial(first.cert))
  assert.equal(log.lines.at(-1)!.level, 'warn')
  await writeFile(join(dir, 'tls.key'), second.key)
  assert.equal(await w.reload(), true)
  assert.equal(serial(w.current.cert), serial(second.cert))
  w.stop()
})

test('a missing or mismatched pair at start is one EDGEOP_ERR_CONFIG naming the files', async () => {
  const dir = await certDir()
  await assert.rejects(
    watchCertificate({ dir, certName: 'c.pem', keyName: 'k.pem', clock: new ManualClock() }, () => {}),
    (e) =>
      isEdgeopError(e, 'EDGEOP_ERR_CONFIG') &&
      e.message.includes(join(dir, 'c.pem')) &&
      e.message.includes('k.pem'),
  )
  await writeFile(join(dir, 'tls.crt'), selfSignedCertificate().cert)
  await writeFile(join(dir, 'tls.key'), selfSignedCertificate().key)
  await assert.rejects(
    watchCertificate({ dir, clock: new ManualClock() }, () => {}),
    (e) => isEdgeopError(e, 'EDGEOP_ERR_CONFIG'),
  )
})
