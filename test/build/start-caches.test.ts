/**
 * The caches that make the artifact start faster under the shipped V8 flags (build/node-flags.ts)
 * are taken by V8, and would be seen not to be: Node's compile cache for the `node` image
 * (build/compile-cache.ts) and the single executable's embedded code cache (build/sea-main.cjs).
 * Acceptance is what Node reports (`NODE_DEBUG_NATIVE=COMPILE_CACHE`; `NODE_DEBUG=edgeop` for the
 * executable), never a timing. The image ships the artifact unpacked (dist/edgeop.unpacked.cjs). Needs
 * dist/edgeop.cjs, its unpacked form and dist/edgeop (`npm run build:sea`).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFile, cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ARTIFACT, UNPACKED_ARTIFACT } from '../../build/artifact.ts'
import { COMPILE_CACHE_DIR, compileCacheEnv, writeCompileCache } from '../../build/compile-cache.ts'
import { NODE_FLAGS } from '../../build/node-flags.ts'
import { seaPath } from '../../build/sea.ts'
import { HOST_ARCH } from '../../build/targets.ts'

const scratch: string[] = []
after(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true })
})
const tempDir = async (name: string): Promise<string> => {
  const d = await mkdtemp(join(tmpdir(), `edgeop-${name}-`))
  scratch.push(d)
  return d
}

/** `node <flags> <app>/edgeop.cjs version` with the image's cache environment and Node's cache log on stderr. */
function runApp(app: string, flags: readonly string[]) {
  return spawnSync(process.execPath, [...flags, join(app, 'edgeop.cjs'), 'version'], {
    encoding: 'utf8',
    env: { ...process.env, ...compileCacheEnv(app), NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
  })
}

test('a compile cache made under the shipped flags is accepted after a move (portable) and only read', async () => {
  const built = await tempDir('cc-built')
  await copyFile(UNPACKED_ARTIFACT, join(built, 'edgeop.cjs'))
  const dir = await writeCompileCache(HOST_ARCH, process.execPath, built, process.getuid?.() ?? 0)
  assert.match(dir, /^v24\.\d+\.\d+-x64-[0-9a-f]+-\d+$/)
  // Another directory, as the image's /app is another place than the build's stage.
  const app = await tempDir('cc-app')
  await cp(built, app, { recursive: true })
  const ran = runApp(app, NODE_FLAGS)
  assert.equal(ran.status, 0, ran.stderr)
  assert.match(ran.stderr, /V8 code cache for CommonJS .*edgeop\.cjs was accepted/)
  assert.doesNotMatch(ran.stderr, /writing cache/)
})

test('the compile cache is specific to the V8 flags: without the shipped ones Node does not find it', async () => {
  const app = await tempDir('cc-flags')
  await copyFile(UNPACKED_ARTIFACT, join(app, 'edgeop.cjs'))
  await writeCompileCache(HOST_ARCH, process.execPath, app, process.getuid?.() ?? 0)
  const ran = runApp(app, [])
  assert.equal(ran.status, 0, ran.stderr)
  assert.doesNotMatch(ran.stderr, /was accepted/)
  assert.match(
    ran.stderr,
    new RegExp(`${COMPILE_CACHE_DIR}/v24[^ ]*: no such file|no such file or directory`),
  )
})

test("Node's own built-in code cache is rejected under the shipped flags (the start-up cost they carry)", () => {
  // If a Node release stops rejecting it, the start-up explanation and numbers of docs/operations.md are stale.
  const ran = spawnSync(process.execPath, [...NODE_FLAGS, ARTIFACT, 'version'], {
    encoding: 'utf8',
    env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
  })
  assert.equal(ran.status, 0, ran.stderr)
  assert.match(ran.stderr, /Code cache of tls \([^)]*\) is rejected/)
  const plain = spawnSync(process.execPath, [ARTIFACT, 'version'], {
    encoding: 'utf8',
    env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
  })
  assert.doesNotMatch(plain.stderr, /is rejected/)
})

test('the single executable takes its embedded code cache, and says so on stderr when V8 refuses it', () => {
  const sea = seaPath(HOST_ARCH)
  const ok = spawnSync(sea, ['version'], { encoding: 'utf8', env: { ...process.env, NODE_DEBUG: 'edgeop' } })
  assert.equal(ok.status, 0, ok.stderr)
  assert.match(ok.stderr, /^EDGEOP \d+: V8 code cache accepted \(\d+ bytes\)$/m)
  // --jitless changes V8's flag hash (NODE_OPTIONS applies: execArgvExtension "env").
  const other = spawnSync(sea, ['version'], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '--jitless' },
  })
  assert.equal(other.status, 0, other.stderr)
  assert.match(other.stdout, /^edgeop \d+\.\d+\.\d+ /)
  assert.match(other.stderr, /V8 rejected the embedded code cache/)
})
