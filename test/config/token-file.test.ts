import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { TOKEN_FILE_LEEWAY_MS, TOKEN_FILE_PERIOD_MS, TokenFileProvider } from '../../src/config/token-file.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { memoryFiles } from './support/helpers.ts'

const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-token-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

test('the re-read cadence is client-go’s: 1 min period minus 10 s leeway', () => {
  assert.equal(TOKEN_FILE_PERIOD_MS, 60_000)
  assert.equal(TOKEN_FILE_LEEWAY_MS, 10_000)
})

test('rotation with a real file: re-read lazily once 50 s have passed, not before', async () => {
  const file = path.join(tmp, 'rotating')
  writeFileSync(file, '  token-A\n')
  const clock = new ManualClock()
  const p = new TokenFileProvider({ path: file, clock })
  const first = await p.get()
  assert.deepEqual(first, { token: 'token-A' })
  writeFileSync(file, 'token-B\n')
  await clock.advance(49_999)
  assert.equal(await p.get(), first, 'still cached just before period − leeway')
  await clock.advance(1)
  assert.deepEqual(await p.get(), { token: 'token-B' })
  await clock.advance(50_000)
  const again = await p.get()
  assert.equal(await p.get(), again, 'an unchanged token keeps its object')
})

test('reads are counted: one read per 50 s window, shared by concurrent callers', async () => {
  const clock = new ManualClock()
  const read = memoryFiles({ '/t': 'tok' })
  const p = new TokenFileProvider({ path: '/t', clock, readFile: read })
  await Promise.all(Array.from({ length: 10 }, () => p.get()))
  assert.equal(read.reads.length, 1)
  for (let i = 0; i < 10; i++) {
    await clock.advance(4_000)
    await p.get()
  }
  assert.equal(read.reads.length, 1, '40 s later: still no re-read')
  await clock.advance(10_000)
  await p.get()
  assert.equal(read.reads.length, 2)
})

test('an empty or missing file is an error when no token was read yet', async () => {
  const empty = path.join(tmp, 'empty')
  writeFileSync(empty, ' \n\t\n')
  await assert.rejects(new TokenFileProvider({ path: empty }).get(), {
    code: 'EDGEOP_ERR_AUTH',
    message: `token file ${empty} is empty`,
  })
  const missing = path.join(tmp, 'missing')
  await assert.rejects(new TokenFileProvider({ path: missing }).get(), {
    code: 'EDGEOP_ERR_AUTH',
    message: `cannot read token file ${missing}: ENOENT`,
    retryable: true,
  })
})

test('a failed re-read keeps the last good token, logs without the token, and retries on the next get', async () => {
  const file = path.join(tmp, 'flaky')
  writeFileSync(file, 'good-token-7c1e\n')
  const clock = new ManualClock()
  const logger = recordingLogger()
  const p = new TokenFileProvider({ path: file, clock, logger })
  await p.get()
  unlinkSync(file)
  await clock.advance(60_000)
  assert.deepEqual(await p.get(), { token: 'good-token-7c1e' })
  assert.deepEqual(await p.get(), { token: 'good-token-7c1e' })
  assert.equal(logger.lines.length, 2, 'tried again on the next get, as client-go does')
  assert.deepEqual(logger.lines[0], {
    level: 'warn',
    msg: 'unable to re-read the token file; using the last token',
    fields: { path: file, error: `cannot read token file ${file}: ENOENT` },
  })
  assert.ok(!JSON.stringify(logger.lines).includes('good-token-7c1e'))
  writeFileSync(file, '')
  assert.deepEqual(await p.get(), { token: 'good-token-7c1e' }, 'an empty file is a failed read too')
  writeFileSync(file, 'next-token\n')
  assert.deepEqual(await p.get(), { token: 'next-token' })
})

test('invalidate after a 401 forces a re-read before the 50 s are up', async () => {
  const file = path.join(tmp, 'revoked')
  writeFileSync(file, 'revoked-token')
  const clock = new ManualClock()
  const p = new TokenFileProvider({ path: file, clock })
  const used = await p.get()
  writeFileSync(file, 'fresh-token')
  assert.equal(p.invalidate({ token: 'unrelated' }), true)
  assert.equal(await p.get(), used, 'a 401 for another token does not force a read')
  assert.equal(p.invalidate(used), true)
  assert.deepEqual(await p.get(), { token: 'fresh-token' })
})

test('fallbackToken (kubeconfig token + tokenFile) is used while the file cannot be read', async () => {
  const read = memoryFiles({})
  const p = new TokenFileProvider({
    path: '/later',
    readFile: read,
    fallbackToken: 'static-token',
    clock: new ManualClock(),
  })
  assert.deepEqual(await p.get(), { token: 'static-token' })
  assert.deepEqual(await p.get(), { token: 'static-token' })
  assert.equal(read.reads.length, 2, 'the file is tried on every get until it can be read')
  assert.equal(p.describe, 'token file /later')
})
