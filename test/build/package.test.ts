/**
 * The package as a user gets it: `npm pack` of a clean checkout of HEAD (prepack builds the
 * library), installed with `npm install ./edgeop-x.tgz` into a new project, a small consumer
 * type-checked and run, then bundled with esbuild (ESM and CJS, plain and with the shipped
 * `edgeop()` plugin) and rolldown, and every bundle run. The consumer builds a KubeClient from
 * an in-memory ClusterConfig and GETs /version from a local HTTP/1.1 server, so every bundle
 * (undici's HTTP/1.1 client trimmed or not) serves HTTP/1.1 through node:http. Only committed files are
 * packed: commit before running this file.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { promisify } from 'node:util'
import {
  type Bundler,
  bundle,
  mirrorControllerExample,
  packedConsumer,
  tarballFiles,
  typecheckConsumer,
} from '../../build/package-consumer.ts'
import { ESM_REQUIRE_BANNER } from '../../src/esbuild/esm-require-banner.ts'

const run = promisify(execFile)

const SMOKE = `import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { KubeClient } from 'edgeop/client'

async function main(): Promise<void> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ gitVersion: 'v1.99.0', path: req.url }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const client = new KubeClient({
    server: \`http://127.0.0.1:\${port}\`,
    tls: { insecureSkipVerify: false },
    namespace: 'default',
    source: 'in-memory',
  })
  try {
    const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' })
    console.log(\`edgeop-smoke \${version.gitVersion}\`)
  } finally {
    await client.close()
    server.close()
  }
}
main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
`

let work: string
let project: string
let tarball: string

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'edgeop-pack-'))
  ;({ tarball, project } = await packedConsumer(work))
  await writeFile(join(project, 'smoke.ts'), SMOKE)
  await writeFile(join(project, 'mirror.ts'), await mirrorControllerExample())
})
test.after(() => rm(work, { recursive: true, force: true }))

async function node(file: string, env: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, [file], { cwd: project, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )
}

test('npm pack of a clean checkout ships the built library, its types, the esbuild plugin and the envtest build files, and no sources or tests', async () => {
  const files = await tarballFiles(tarball)
  for (const f of ['package.json', 'LICENSE', 'README.md', 'dist/lib/index.js', 'dist/lib/client.js'])
    assert.ok(files.includes(f), `${f} is packed`)
  for (const f of ['dist/lib/esbuild.js', 'dist/types/index.d.ts', 'dist/types/esbuild/index.d.ts'])
    assert.ok(files.includes(f), `${f} is packed`)
  // edgeop/testing builds the control-plane binaries with the script and build-only Go modules it ships.
  const envtestBuild = /^test\/controlplane\/(build-binaries\.sh|versions\.env|go\/[a-z0-9]+\/go\.(mod|sum))$/
  for (const f of ['test/controlplane/build-binaries.sh', 'test/controlplane/versions.env'])
    assert.ok(files.includes(f), `${f} is packed (edgeop/testing needs it)`)
  const strays = files.filter(
    (f) =>
      (/^(src|test|build)\//.test(f) && !envtestBuild.test(f)) ||
      f.endsWith('.cjs') ||
      f.includes('meta.json'),
  )
  assert.deepEqual(strays, [])
})

test('the installed package type-checks (strict, nodenext) for the smoke program and the controller of docs/library.md', async () => {
  await typecheckConsumer(project, ['smoke.ts', 'mirror.ts'])
})

test('the installed package runs: a KubeClient from an in-memory config GETs /version', async () => {
  const r = await node(join(project, 'smoke.ts'))
  assert.equal(r.stdout.trim(), 'edgeop-smoke v1.99.0', r.stderr)
})

const runs: [Bundler, 'esm' | 'cjs'][] = [
  ['esbuild', 'cjs'],
  ['esbuild+plugin', 'esm'],
  ['esbuild+plugin', 'cjs'],
  ['rolldown', 'esm'],
  ['rolldown', 'cjs'],
]
for (const [bundler, format] of runs) {
  test(`bundled with ${bundler} as ${format}, the smoke program runs`, async () => {
    const out = await bundle(project, 'smoke.ts', bundler, format)
    const r = await node(out.file)
    assert.equal(r.stdout.trim(), 'edgeop-smoke v1.99.0', r.stderr)
  })
}

test('plain esbuild ESM: without the require banner undici cannot load node:assert; with ESM_REQUIRE_BANNER it runs', async () => {
  const bare = await bundle(project, 'smoke.ts', 'esbuild', 'esm')
  const crashed = await node(bare.file)
  assert.match(crashed.stderr, /Dynamic require of "node:[a-z_/]+" is not supported/)
  const fixed = await bundle(project, 'smoke.ts', 'esbuild', 'esm', { banner: ESM_REQUIRE_BANNER })
  const r = await node(fixed.file)
  assert.equal(r.stdout.trim(), 'edgeop-smoke v1.99.0', r.stderr)
})

for (const bundler of ['esbuild+plugin', 'rolldown'] as Bundler[]) {
  test(`the controller of docs/library.md bundled with ${bundler} starts and fails only on the missing kubeconfig`, async () => {
    const out = await bundle(project, 'mirror.ts', bundler, 'esm')
    const r = await node(out.file, { KUBECONFIG: join(work, 'no-such-kubeconfig') })
    assert.notEqual(r.code, 0)
    assert.doesNotMatch(r.stderr, /Dynamic require|Cannot find module/)
    assert.match(r.stderr, /no-such-kubeconfig/)
  })
}
