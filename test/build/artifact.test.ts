/**
 * The operator artifact (dist/edgeop.cjs, built by `npm run build` before the tests):
 * size budget, what must never be inside it, and that HTTP/1.1 is served by node:http.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import {
  gzipBytes,
  inflateArtifact,
  PACKED_FUNCTION,
  PACKED_MODULES,
  unpackArtifact,
  unpackDependencies,
  zodNamesUsed,
} from '../../build/artifact.ts'
import { UNBUNDLED_HTTP1 } from '../../src/esbuild/undici-trims.ts'
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
 * gzip of that back. Raised 2026-12-01 for the measure, not the artifact: gzip is now measured as
 * GNU gzip -9 does it (its 32K-symbol deflate blocks, emulated by zlib memLevel 9, and GNU gzip itself
 * where installed) as well as with Node's default zlib (16K-symbol blocks), and the largest counts.
 * The same 354,062 bytes are 122,293 by the default but 123,687 by GNU gzip -9 (123,672 zlib
 * memLevel 9): over the 122,880 budget, which the old measure hid. Lowered 2026-12-01 to just above
 * 354,050 bytes, 123,126 (zlib memLevel 9; GNU gzip -9 122,604, zlib default 122,835): the packed
 * llhttp module moved from the first line to the last, where fewer code symbols share its block.
 * Lowered 2026-12-01 to just above 353,992 bytes, 123,056 (GNU gzip -9 122,554, zlib default
 * 122,770): a third terser pass. Lowered 2026-12-01 by HTTP/1.1 through node:http
 * (src/transport/http1-dispatcher.ts): undici's HTTP/1.1 client (15 KB minified) and the packed llhttp
 * WebAssembly parser it loaded (the 20 KB base64 last line) are stubbed out (`noHttp1Client`):
 * −31,991 bytes and −20,099 gzip by this measure (−19,579 GNU gzip) on the same sources, of which
 * the new dispatcher costs back about 2.5 KB minified. That paid for this stop's features: several
 * clusters (+1,146), CEL rules with field descriptions (+583), sharding (+1,414), tracing (+2,779: the
 * tracer, sampler, batch queue, OTLP/HTTP JSON exporter and OTEL_* configuration 2,008, the spans of
 * the client, the controller and the database client, the writer link and the flag 771), admission
 * webhooks (+4,428: the webhook server, the certificate controller, the AppService handlers, flags and
 * manifests) and issue 22's metrics (+742: dependency latency by outcome, conditions and finalizer
 * wait per controller, drift, leader changes, informer objects and bytes, process CPU and fds).
 * Set 2026-12-01 with all of them merged to just above 351,303 bytes, 114,080 gzip -9 (GNU gzip -9
 * 113,883): 8,800 under the 122,880 budget. Raised 2026-12-01 to just above 351,667 bytes, 114,226
 * (+364 / +146): certificates carry subject and authority key identifiers, so a TLS client picks the
 * right one of two same-named CAs during a webhook CA rotation (a CI run failed without them).

 * Raised 2026-12-01 for issue 20's second API version (+4,846 bytes, +1,678 gzip -9 by this measure,
 * +1,716 GNU gzip: v1beta1's schema in the CRD, the lossless conversion and its ConversionReview
 * route, `edgeop migrate` and the storage migration) to just above 356,513 bytes, 115,888 gzip -9
 * (GNU gzip -9 115,727): 6,992 under the budget. Raised 2026-12-01 to just above 356,676 bytes,
 * 115,926 (+163 / +38): a sharded pass relabels at most 8 objects at once (MOVES_IN_FLIGHT), and
 * `check --shard` checks `list` on Leases. Raised 2026-12-01 for issue 18's compact store (+9,788 bytes,
 * +2,990 gzip -9 by this measure, +2,981 GNU gzip: the JSON scanner and codec, keepBytes lists and
 * watches, the CompactIndexer and its index table, snapshots of bytes) to just above 366,464 bytes,
 * 118,916 gzip -9 (GNU gzip -9 118,745): 3,964 under the budget. Raised 2026-12-01 to just above 368,292
 * bytes, 119,456 (+1,828 / +540) for issue 18's protobuf wire in the client: content negotiation, the
 * Content-Type switch, protobuf Status errors. The decoder and the generated table are not in the artifact:
 * the client reaches them only through a protobuf kind (`kind.wire`), and the operators name none (the
 * Deployment and Service kinds would cost 6,093 gzip for their tables plus about 4,400 for the decoder).
 * Bytes raised, gzip lowered, 2026-12-01 to just above 368,381 bytes, 119,422 (+89 / −34): terser's
 * `ascii_only` escapes the non-ASCII characters in messages, so V8 holds the source as a one-byte
 * string (half the heap for the process's life), and node:child_process is fetched with
 * process.getBuiltinModule when an exec plugin first runs instead of imported at start. Raised
 * 2026-12-01 to just above 368,705 bytes, 119,536 (+324 / +114): the compact store keeps its bytes as
 * one-byte strings (malloc fragmentation, see src/core/encoded-object.ts), deepFreeze without an array per
 * object, and the factory's compact default for resource types that carry a protobuf kind.
 * Issue 28's hardening, 2026-12-02, took it from 368,705 bytes / 119,536 to 384,708 / 125,342
 * (GNU gzip -9 125,127), over the 122,880 budget: bounded input (one reader for every file, exec
 * plugins stopped past their time and output cap, YAML alias counts; +3,278 / +1,361), certificates
 * for `openssl verify -x509_strict` (+1,967 / +780), the agent and cache defects D8-D15 (+5,462 /
 * +1,924), the guarded request path for every server and the NetworkPolicy generator (+4,506 /
 * +1,540), one concept per file in the controller and manager (+666 / +218) and later file splits.
 * Shorter --help texts (--root, --cache-dir, --node-name, `manifests`) took back 100 / 48, and optional
 * fields written as plain properties instead of conditional spreads 1,919 / 464: 382,689 / 124,830, 1,950
 * gzip bytes over the budget. Raised 2026-12-02 to just above 383,403 bytes, 125,043 gzip -9 (zlib
 * memLevel 9; +714 / +213): a controller registered twice refused at add, and a second informer()
 * request's indexers added to the shared informer (issue 31 F1, F8: each an error message and its check).
 * Raised again to just above 388,951 bytes, 126,949 gzip -9 (+5,548 / +1,906): issue 36 and 31 F3, an
 * informer's restored and synced states with the server-version read that ends the first, their
 * gauges and readiness text, the manager's wait for discovery before restored caches serve, parked keys
 * re-armed by owned and mapped changes and read back from the object's condition, 403s classified by
 * who can fix them, and finalizers retried forever at their interval. The
 * minifiers have little left: terser's unsafe options, `pure_getters` (wrong for undici's getters)
 * and esbuild-only or terser-only builds measured at most 119 gzip less, most of them more. The
 * ceiling stays above the budget until code is cut. Lowered 2026-12-02 to just above 316,984 bytes,
 * 123,584 (GNU gzip -9; zlib 123,225 and 123,215), from 383,403 / 125,043 (GNU 124,827), the same sources:
 * undici and the zod functions the sources call are packed, brotli at quality 11 in base64 on the last
 * line (build/artifact.ts packDependencies; −661 for undici alone, −491 more with zod, by the zlib measure),
 * the class fields assigned in constructors (build/tsconfig.artifact.json: −210), undici's
 * NODE_DEBUG=undici lines cut (−272) and its Client option messages shortened (−178). GNU gzip -9 pays
 * 851 bytes for the base64 sharing a 32K-symbol block with code (each part alone: 94,105 + 28,634),
 * zlib 514, so the largest measure is GNU's. Still 704 over the 122,880 budget. Raised 2026-12-02 to
 * just above 317,206 bytes, 123,659 (GNU; +222 / +75): handlers, predicates and a controller's key
 * functions say when they read only metadata, so a compact store delivers their events undecoded.
 * Lowered 2026-12-02 to the budget, 122,880 gzip (measured 316,202 bytes, GNU gzip -9 122,870, zlib
 * 122,523 and 122,521): the packed undici and zod without Symbol descriptions (undici's ~170 private keys:
 * −686 GNU, −682 zlib), undici's body readers other than text() stubbed (−27 / −10) and its Request
 * sentences for FormData and unset options shortened (−76 / −78). Merged on main 2026-12-02 with the
 * restored/synced informer states, durable parks and forever-retried finalizers (issue 36, 31 F3:
 * +5,548 / +1,906 on the old build) and the transport's `exchange` option, the simulator's seam (+31 / +16;
 * the simulator itself is not in the artifact): measured 321,750 bytes, GNU gzip -9 124,598 before the
 * cuts that bring it back under the budget. Then the NodeConfig agent at fleet scale (issue 33: per-node
 * NodeConfigReports and their CRD with `kubectl explain` descriptions, rollout waves, the
 * `agent-aggregator` command; +8,067 / +2,338 on the old build). Then edge networks (issue 34: proxies
 * through kubeconfig proxy-url and HTTPS_PROXY/NO_PROXY, HTTP CONNECT and a SOCKS5 handshake of our own;
 * dead connections found by HTTP/2 PING and TCP keep-alive; +9,201 / +3,201 on the old build). Then a
 * user's operator without foot-guns (issue 31 F2, F4, F6, F7: --shard opt-in, namespace-independent
 * webhook exclusions, start-up mistakes in one line; +1,408 / +468 on the old build).
 * Lowered 2026-12-02 to just above 148,168 bytes, 112,177 GNU gzip -9 (zlib 111,630), from 330,247 /
 * 127,536 (zlib 126,608) on the sources before the edge-network and user-operator merges (0e0f337): edgeop's own code is packed with undici and zod,
 * one brotli stream on the last line (build/artifact.ts packArtifact), and a one-line loader compiles it
 * with vm.compileFunction under the artifact's file name, so stack frames still name dist/edgeop.cjs:
 * −182,079 bytes and −15,359 GNU gzip (−14,978 zlib), as brotli at quality 11 packs the 293 KB of code about
 * 12 % tighter than deflate and base64 costs gzip little more than its 6 bits a character. The price,
 * measured 2026-12-02 with 21 interleaved runs of `version` each (median, /usr/bin/time, load 4 to 8):
 * `node dist/edgeop.cjs` wall 92.5 → 95.6 ms, CPU 90 → 90 ms, peak RSS 60.7 → 61.2 MB. A V8 code cache of
 * the packed artifact holds only the loader (under the image's compile cache and `--optimize-for-size`:
 * wall 120.9 → 132.5 ms, peak RSS 59.6 → 61.4 MB), so the `node` image and the single executable ship the
 * unpacked form, dist/edgeop.unpacked.cjs (image: 125.6 ms, 58.8 MB; executable: wall 212.2 → 215.4 ms,
 * CPU 90 → 90 ms, peak RSS 58.7 → 58.1 MB).
 * After `version`, with two gc() calls: RSS 61.0 → 62.0 MB, V8 heap used 7.37 → 7.62 MB (the loader's
 * script keeps the 148 KB of base64 alive). 10,703 gzip bytes under the 122,880 budget. With the edge networks
 * and the user-operator fixes merged: 152,332 bytes, 115,327 GNU gzip -9, the raw ceiling just above it.
 * With the simulator's file seam, the destroyed-HTTP/2-session retry and the migration Job's manifest merged:
 * 152,448 bytes, 115,411 GNU gzip -9; the raw ceiling just above it again.
 * Raised 2026-12-02 to just above 158,076 bytes, 119,683 GNU gzip -9 (+5,628 / +4,270 on 152,448 / 115,413
 * measured the same way), the gzip budget unchanged: metadata-only informers ask for protobuf
 * PartialObjectMetadata on every resource, as client-go's metadata client does, so the protobuf decoder and
 * ObjectMeta's table are in (the agent's and the aggregator's Node watches use them); no kind's table is.
 * Deployments and Services in protobuf too would have been 163,628 / 123,868, over the budget, for no measured
 * gain (src/operators/appservice/operator.ts says what was measured).
 * With the aggregator's status-write rule (src/operators/nodeconfig/status-write.ts: a rollout's NodeConfig
 * events bounded by its waves, not its seconds) merged: 158,256 bytes, 119,832 GNU gzip -9; with the exec plugins'
 * signal handlers installed before the spawn: 158,340 bytes, 119,878; the ceiling just above.
 * With the metadata-only get in protobuf PartialObjectMetadata too (a get's object decoder, one byte-read helper
 * shared with the list): 158,428 bytes, 119,933 GNU gzip -9; with the factory's store chosen per kind of informer
 * (compact for custom resources, eager for metadata-only ones) and the AppService children named eager: 158,452
 * bytes, 119,967. With the base-RSS work beside it (Node built-ins taken when first used, the kubeconfig read by
 * a written-out decoder instead of zod): 158,520 bytes, 120,018 GNU gzip -9; the ceiling just above.
 */
const MAX_BYTES = 158_600
const MAX_GZIP_BYTES = 122_880

async function artifact(): Promise<Buffer> {
  try {
    return await readFile(ARTIFACT)
  } catch {
    throw new Error('dist/edgeop.cjs is missing: run `npm run build` first (npm test does)')
  }
}

/** GNU `gzip -9`'s size of the artifact, or undefined where no `gzip` is installed. */
async function gnuGzipBytes(): Promise<number | undefined> {
  try {
    const { stdout } = await run('gzip', ['-9c', ARTIFACT], { encoding: 'buffer', maxBuffer: 1 << 24 })
    return stdout.length
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined
    throw err
  }
}

test('the artifact fits its size budget, by the strictest gzip -9 measure', async () => {
  const buf = await artifact()
  // zlib at both block lengths (build/artifact.ts gzipBytes), and GNU gzip itself where installed.
  const sizes = { zlib: gzipBytes(buf), 'GNU gzip': await gnuGzipBytes() }
  assert.ok(buf.length <= MAX_BYTES, `${buf.length} bytes > ${MAX_BYTES}`)
  for (const [how, gz] of Object.entries(sizes))
    if (gz !== undefined) assert.ok(gz <= MAX_GZIP_BYTES, `${gz} gzip -9 bytes (${how}) > ${MAX_GZIP_BYTES}`)
})

test('the artifact is strict-mode code: its first statement, after the banner comment, is the directive', async () => {
  // A statement before the directive would silently turn the whole bundle into sloppy-mode code.
  const head = (await artifact()).subarray(0, 400).toString('utf8')
  assert.match(head, /^\/\*[^\n]*\*\/\n"use strict";/)
})

test('the artifact is ASCII, so V8 holds its source as a one-byte string (half the bytes of two-byte)', async () => {
  const buf = await artifact()
  const at = buf.findIndex((b) => b > 0x7f)
  assert.equal(
    at,
    -1,
    `a non-ASCII byte at ${at}: ${buf.subarray(Math.max(0, at - 40), at + 10).toString('utf8')}`,
  )
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
    /undici\/lib\/llhttp\//,
    /undici\/lib\/dispatcher\/parser-h1\.js$/,
  ]
  const found = inputs.filter((f) => forbidden.some((re) => re.test(f)))
  assert.deepEqual(found, [])
})

test('undici’s HTTP/1.1 client is in the artifact only as the stub that says so', async () => {
  const meta = JSON.parse(await readFile(join(ROOT, 'dist/edgeop.meta.json'), 'utf8')) as {
    inputs: Record<string, { bytes: number }>
  }
  const h1 = Object.entries(meta.inputs).filter(([f]) => f.endsWith('undici/lib/dispatcher/client-h1.js'))
  assert.equal(h1.length, 1, 'undici’s client.js still requires it')
  assert.ok(h1[0]![1].bytes < 300, `client-h1.js is ${h1[0]![1].bytes} bytes in, not the stub`)
  // undici is packed (build/artifact.ts packDependencies): its stub is in the inflated source.
  assert.ok(
    unpackDependencies((await artifact()).toString('latin1')).includes(UNBUNDLED_HTTP1),
    'the stub’s message is in',
  )
})

test('the packed undici and zod need only Node’s built-in modules and export what the sources call', async () => {
  const source = unpackDependencies((await artifact()).toString('latin1'))
  const required = [...source.matchAll(/\brequire\(("[^"]*")\)/g)].map((m) => JSON.parse(m[1]!) as string)
  assert.ok(required.length > 5, 'sanity: the bundle requires built-ins')
  assert.deepEqual(
    required.filter((id) => process.getBuiltinModule(id) === undefined),
    [],
  )
  assert.doesNotMatch(source.replace(/\brequire\("[^"]*"\)/g, ''), /\brequire\b/, 'only literal requires')
  const module = { exports: {} as Record<string, unknown> }
  new Function('module', 'exports', 'require', source)(module, module.exports, (id: string) =>
    process.getBuiltinModule(id),
  )
  assert.deepEqual(Object.keys(module.exports).sort(), Object.keys(PACKED_MODULES).sort())
  const zod = module.exports.zod as Record<string, unknown>
  for (const name of await zodNamesUsed()) assert.ok(zod[name] !== undefined, `zod.${name} is packed`)
  assert.equal(typeof (module.exports.Pool as unknown), 'function')
})

test('a stack frame of the packed code names the artifact, at a position in its inflated code', async () => {
  // The loader compiles the packed code under the artifact's file name (build/artifact.ts packArtifact):
  // a frame reads `dist/edgeop.cjs:<line>:<column>`, not `eval at` or `evalmachine`, and the position
  // is one in `unpackArtifact`'s source. A preloaded stdout.write records the stack of its caller.
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-stack-'))
  const probe = join(dir, 'probe.cjs')
  await writeFile(
    probe,
    'process.stdout.write = () => { process.stderr.write(new Error("probe").stack + "\\n"); return true }\n',
  )
  const { stderr } = await run(process.execPath, ['--require', probe, ARTIFACT, 'version'])
  const frame = /^ {4}at .*\((.*):(\d+):(\d+)\)$/m.exec(stderr.split('\n').slice(2).join('\n'))
  assert.ok(frame !== null, `a frame below the probe's: ${stderr}`)
  assert.equal(frame[1], ARTIFACT)
  const line = unpackArtifact((await artifact()).toString('latin1')).split('\n')[Number(frame[2]) - 1]
  assert.ok(
    line !== undefined && Number(frame[3]) <= line.length,
    `${frame[2]}:${frame[3]} is in the inflated code`,
  )
  assert.match(
    line.slice(Number(frame[3]) - 30, Number(frame[3]) + 10),
    /process\.stdout\.write/,
    'the caller',
  )
})

test('the unpacked artifact, which the single executable embeds, is the same program', async () => {
  const packed = (await artifact()).toString('latin1')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-unpacked-'))
  const unpacked = join(dir, 'edgeop.cjs')
  await writeFile(unpacked, inflateArtifact(packed), 'latin1')
  assert.doesNotMatch(await readFile(unpacked, 'latin1'), new RegExp(`\\b${PACKED_FUNCTION}\\b`))
  // Line 3 is the packed code as it is, so a frame's column means the same in both forms.
  assert.equal((await readFile(unpacked, 'latin1')).split('\n')[2], unpackArtifact(packed))
  const [a, b] = await Promise.all([
    run(process.execPath, [ARTIFACT, 'version']),
    run(process.execPath, [unpacked, 'version']),
  ])
  assert.equal(b.stdout, a.stdout)
  assert.equal(b.stderr, '')
})

test('the artifact runs with plain node and no flags, and HTTP/1.1 is served by node:http', async () => {
  const { stdout } = await run(process.execPath, [ARTIFACT, 'version'])
  assert.match(
    stdout,
    /^edgeop \d+\.\d+\.\d+ \(node v[\d.]+, \w+\/\w+\)$/m,
    'no V8 flags named when run without',
  )
  // A plain-HTTP server forces HTTP/1.1 instead of HTTP/2: the artifact has no other HTTP/1.1 client
  // than Node's (undici's is the stub above), so a parsed /version proves node:http serves it.
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
    assert.doesNotMatch(out.stdout + String((out as { stderr?: unknown }).stderr), /not bundled/)
  } finally {
    await stub.close()
  }
})
