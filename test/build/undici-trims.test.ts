/**
 * The undici trims of the artifact (build/undici-trims.ts, src/esbuild/undici-trims.ts): undici
 * bundled with the artifact's own plugins still speaks HTTP/2 with string bodies and reads header
 * names as before; its (stubbed) HTTP/1.1 client fails a connection cleanly; the trimmed body
 * writers fail a request cleanly; the exports reduced to stubs are read by no bundled undici file;
 * and a declaration that moved fails the build instead of being skipped.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createSecureServer, type Http2SecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { after, before, test } from 'node:test'
import * as esbuild from 'esbuild'
import { artifactOptions, ROOT } from '../../build/artifact.ts'
import {
  applyStubs,
  UNBUNDLED_BODY,
  UNREFERENCED_EXPORTS,
  UNSET_OPTIONS,
  UPGRADE_AND_CONNECT,
} from '../../build/undici-trims.ts'
import { UNBUNDLED_HTTP1 } from '../../src/esbuild/undici-trims.ts'
import { encodeBody } from '../../src/transport/body-codec.ts'
import type * as UndiciModule from '../../src/transport/undici.ts'
import { startStub } from '../support/http-stub.ts'
import { selfSignedCert } from '../support/self-signed.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeop-trims-'))
let undici: typeof UndiciModule
let inputs: string[] = []

before(async () => {
  // src/transport/undici.ts bundled exactly as the artifact bundles it (readable: not minified).
  const outfile = join(dir, 'undici.cjs')
  const result = await esbuild.build({
    ...artifactOptions('test'),
    entryPoints: [join(ROOT, 'src/transport/undici.ts')],
    outfile,
    minify: false,
    logLevel: 'error',
  })
  inputs = Object.keys(result.metafile.inputs)
  undici = (await import(outfile)).default as typeof UndiciModule
})
after(() => rmSync(dir, { recursive: true, force: true }))

/** POSTs `body` through a fresh pool to `origin`; returns status, headers and text, and closes the pool. */
async function post(
  origin: string,
  body: string | Readable,
  poolOptions: Record<string, unknown> = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const pool = new undici.Pool(origin, poolOptions)
  try {
    const res = await undici.request(pool, {
      path: '/x',
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Edgeop-Test': 'yes' },
      body,
    })
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() }
  } finally {
    await pool.close()
  }
}

test('HTTP/1.1 handed to the trimmed undici fails the request with the stub’s message (the client never does)', async () => {
  const stub = await startStub((_req, res) => res.end())
  try {
    await assert.rejects(post(stub.url, '{"a":1}'), { message: UNBUNDLED_HTTP1 })
    assert.equal(stub.seen.length, 0, 'nothing was sent')
  } finally {
    await stub.close()
  }
})

test('the client hands undici strings only (why the stream, Blob and iterable writers can go)', () => {
  for (const body of ['x', { a: 1 }, [1], 0, null, true])
    assert.equal(typeof encodeBody(body), 'string', `encodeBody(${JSON.stringify(body)})`)
  assert.equal(encodeBody(undefined), undefined)
})

test('HTTP/2 over TLS: a string body arrives whole, response headers read, a stream body fails cleanly', async () => {
  const { cert, key } = selfSignedCert(dir)
  const seen: { version: string; body: string; test: unknown }[] = []
  const server: Http2SecureServer = createSecureServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({
        version: req.httpVersion,
        body: Buffer.concat(chunks).toString(),
        test: req.headers['x-edgeop-test'],
      })
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Retry-After': '3', 'X-Mixed-Case': 'h2' })
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  try {
    const out = await post(origin, '{"b":2}', { allowH2: true, connect: { ca: cert } })
    assert.deepEqual(seen, [{ version: '2.0', body: '{"b":2}', test: 'yes' }])
    assert.equal(out.text, 'ok')
    assert.equal(out.headers['content-type'], 'text/plain') // a well-known name
    assert.equal(out.headers['retry-after'], '3') // the one the client reads
    assert.equal(out.headers['x-mixed-case'], 'h2') // an unknown name
    await assert.rejects(post(origin, Readable.from(['x']), { allowH2: true, connect: { ca: cert } }), {
      message: UNBUNDLED_BODY,
    })
  } finally {
    server.close()
  }
})

/**
 * The bundled files (undici, zod and edgeop's own), as paths below ROOT, with their source on disk;
 * without undici's HTTP/1.1 client, which the bundle holds only as `noHttp1Client`'s stub.
 */
function bundledSources(): { file: string; source: string }[] {
  return inputs
    .filter((f) => !f.startsWith('<') && !f.endsWith('undici/lib/dispatcher/client-h1.js'))
    .map((f) => {
      const path = f.includes('node_modules/') ? f.replace(/^.*?node_modules\//, 'node_modules/') : f
      return { file: path, source: readFileSync(join(ROOT, path), 'utf8') }
    })
}

/** The declaration (top-level function or class member) around `index` of `source`. */
function enclosing(source: string, index: number): string {
  const heads = [
    ...source
      .slice(0, index)
      .matchAll(
        /\n(?:(?:async )?function (\w+) \(| {2}(?:async )?(?!(?:if|for|while|switch|catch)\b)(\w+) \()/g,
      ),
  ]
  const last = heads.at(-1)
  return last ? (last[1] ?? last[2] ?? '') : '(top level)'
}

test('every export reduced to a stub is read by no other file in the bundle', () => {
  const sources = bundledSources()
  assert.ok(sources.filter((s) => s.file.includes('undici/lib/')).length > 10, 'sanity: undici is bundled')
  assert.ok(
    sources.some((s) => s.file.startsWith('src/')),
    'sanity: edgeop is bundled',
  )
  const readers: string[] = []
  for (const trim of UNREFERENCED_EXPORTS) {
    for (const { name } of trim.stubs) {
      for (const { file, source } of sources) {
        if (!file.endsWith(`undici/lib/${trim.file}`) && new RegExp(`\\b${name}\\b`).test(source))
          readers.push(`${name} in ${file}`)
      }
    }
  }
  assert.deepEqual(readers, [])
})

test('the upgrade and unset-option stubs are reached only from those paths', () => {
  // Every place outside the stubs that names a stubbed declaration (by the nearest declaration head
  // above it; diagnostics.js's load-time `trackWebSocketEvents` call counts as inside the stub), pinned: a new caller after an
  // undici upgrade fails here and needs a look. Why each is unreachable in the artifact:
  const expected = [
    // a handler's own `onRequestUpgrade` is checked (and named in the error) for upgrade requests
    'onRequestUpgrade from assertRequestHandler in node_modules/undici/lib/core/util.js',
    'onRequestUpgrade from assertRequestHandler in node_modules/undici/lib/core/util.js',
    // the GOAWAY cleanup removes the upgrade close listener (a no-op stub still removes nothing)
    'onUpgradeStreamClose from severRequestStream in node_modules/undici/lib/dispatcher/client-h2.js',
    // `responseHeaders === 'raw' ? util.parseRawHeaders(rawHeaders) : headers`
    'parseRawHeaders from onResponseStart in node_modules/undici/lib/api/api-request.js',
    // writeH2's `if (upgrade || method === 'CONNECT')` branch (twice)
    'setupUpgradeStream from writeH2 in node_modules/undici/lib/dispatcher/client-h2.js',
    'setupUpgradeStream from writeH2 in node_modules/undici/lib/dispatcher/client-h2.js',
  ]
  const stubbed = new Set(
    [...UPGRADE_AND_CONNECT, ...UNSET_OPTIONS].flatMap((t) => t.stubs.map((s) => s.name)),
  )
  const callers: string[] = []
  for (const { file, source } of bundledSources()) {
    for (const name of stubbed) {
      for (const m of source.matchAll(new RegExp(`\\b${name}\\b`, 'g'))) {
        if (/(?:function |\n {2})$/.test(source.slice(0, m.index))) continue // its own declaration
        const caller = enclosing(source, m.index)
        if (!stubbed.has(caller)) callers.push(`${name} from ${caller} in ${file}`)
      }
    }
  }
  assert.deepEqual(callers.sort(), expected.sort())
  // ...and the option that reaches parseRawHeaders is set nowhere in edgeop.
  const setters = bundledSources().filter(
    (s) => s.file.startsWith('src/') && /\bresponseHeaders\b/.test(s.source),
  )
  assert.deepEqual(
    setters.map((s) => s.file),
    [],
  )
})

test('a declaration missing from the undici source fails the build instead of being skipped', () => {
  const trim = {
    file: 'x.js',
    reason: 'test',
    stubs: [{ kind: 'function', name: 'gone', stub: '' }],
  } as const
  assert.throws(() => applyStubs('function kept () {\n}\n', trim), /has no single `function gone \(`/)
  assert.equal(
    applyStubs('a\nfunction gone (x) {\n  return x\n}\nb\n', trim),
    'a\n\nb\n',
    'the whole declaration, up to its closing line, is replaced',
  )
})
