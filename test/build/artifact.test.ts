/**
 * The operator artifact (dist/edgeop.cjs, built by `npm run build` before the tests):
 * size budget, what must never be inside it, and that the trimmed undici still speaks
 * HTTP/1.1.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { json, startStub } from '../support/http-stub.ts'

const ROOT = join(import.meta.dirname, '../..')
const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
const run = promisify(execFile)

/**
 * Ceilings that only go down (raise one only in the commit that needs it, with the reason).
 * Issue budget: <= 384 KB minified and <= 120 KB gzip (stretch 100 KB). Measured
 * 2026-11-29 with both operators: 323,635 bytes, 114,438 gzip -9. Raised 2026-12-01 to the
 * budget itself for gzip (341,168 bytes, 120,897 gzip measured): the first-contact checks
 * (bounded flags, DNS-1123 names, the agent root, kubeconfig size and UTF-8, timeouts that name
 * their step, the missing-CRD check, reconcile stacks) cost 5.3 KB gzip. Lowered 2026-12-01 to
 * just above 336,705 bytes, 118,730 gzip -9 (from 351,418 / 123,984): undici code the artifact
 * cannot reach replaced at bundle time (build/undici-trims.ts), the compressed llhttp module
 * moved to the first line and stripped of unused exports. Raised 2026-12-01 to just above
 * 353,995 bytes, 122,264 gzip -9 (under the 122,880 budget): circuit breakers, cache snapshots,
 * the retry policy and parked keys, install/uninstall, secure metrics and the production wiring
 * brought it to 360,376 / 127,228; a terser pass after esbuild (build/artifact.ts) took 4,964
 * gzip of that back. Raised on wt/metrics to just above 356,187 bytes, 123,035 gzip -9 (+2,125 /
 * +742; OVER the 122,880 budget, for the lead to settle at merge): issue 22's metrics (dependency
 * latency by outcome, conditions and finalizer wait per controller, drift, leader changes, informer
 * objects and bytes, process CPU and fds).
 */
const MAX_BYTES = 356_200
const MAX_GZIP_BYTES = 123_040

async function artifact(): Promise<Buffer> {
  try {
    return await readFile(ARTIFACT)
  } catch {
    throw new Error('dist/edgeop.cjs is missing: run `npm run build` first (npm test does)')
  }
}

test('the artifact fits its size budget', async () => {
  const buf = await artifact()
  const gz = gzipSync(buf, { level: 9 }).length
  assert.ok(buf.length <= MAX_BYTES, `${buf.length} bytes > ${MAX_BYTES}`)
  assert.ok(gz <= MAX_GZIP_BYTES, `${gz} gzip bytes > ${MAX_GZIP_BYTES}`)
})

test('the artifact is strict-mode code: its first statement, after the banner comment, is the directive', async () => {
  // The banner also carries the llhttp module (build/artifact.ts); a statement before the
  // directive would silently turn the whole bundle into sloppy-mode code.
  const head = (await artifact()).subarray(0, 400).toString('utf8')
  assert.match(head, /^\/\*[\s\S]*?\*\/\n"use strict";var __edgeop_llhttp_simd="/)
})

test('no @kubernetes/client-node module and no unused undici feature is in the artifact', async () => {
  const meta = JSON.parse(await readFile(join(ROOT, 'dist/edgeop.meta.json'), 'utf8')) as {
    inputs: Record<string, unknown>
  }
  const inputs = Object.keys(meta.inputs)
  assert.ok(
    inputs.some((f) => f.includes('undici/lib/dispatcher/pool.js')),
    'sanity: the pool is in',
  )
  const forbidden = [
    /@kubernetes\/client-node/,
    /undici\/index\.js$/,
    /undici\/lib\/web\/fetch\/index\.js$/,
    /undici\/lib\/web\/websocket\//,
    /undici\/lib\/web\/eventsource\//,
    /undici\/lib\/mock\//,
    /undici\/lib\/cache\//,
    /undici\/lib\/web\/cache\//,
    /undici\/lib\/interceptor\/cache/,
    /undici\/lib\/milo\//,
  ]
  const found = inputs.filter((f) => forbidden.some((re) => re.test(f)))
  assert.deepEqual(found, [])
})

test('the artifact runs with plain node and no flags, and its HTTP/1.1 path parses real responses', async () => {
  const { stdout } = await run(process.execPath, [ARTIFACT, 'version'])
  assert.match(
    stdout,
    /^edgeop \d+\.\d+\.\d+ \(node v[\d.]+, \w+\/\w+\)$/m,
    'no V8 flags named when run without',
  )
  // A plain-HTTP server forces HTTP/1.1 (llhttp) instead of HTTP/2.
  const stub = await startStub((req, res) => {
    if (req.url.startsWith('/version'))
      return json(res, 200, { gitVersion: 'v1.37.2', major: '1', minor: '37' })
    return json(res, 403, {
      kind: 'Status',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'stub',
    })
  })
  try {
    const dir = await mkdtemp(join(tmpdir(), 'edgeop-h1-'))
    const kubeconfig = join(dir, 'config')
    await writeFile(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {server: "${stub.url}"}\ncontexts:\n- name: s\n  context: {cluster: s, user: u}\nusers:\n- name: u\n  user: {token: t}\ncurrent-context: s\n`,
    )
    const out = await run(process.execPath, [ARTIFACT, 'check', `--kubeconfig=${kubeconfig}`]).catch(
      (e: { stdout: string }) => e,
    )
    assert.match(out.stdout, /v1\.37\.2/, 'the /version body was parsed over HTTP/1.1')
    assert.ok(stub.seen.some((r) => r.url.startsWith('/version')))
  } finally {
    await stub.close()
  }
})
