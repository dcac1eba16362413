/**
 * Where kustomize, helm, prometheus, promtool and jaeger come from (build/tools/go-tools.ts + build-go-tool.sh): each version
 * in versions.env is the one its go.mod pins, the override variable is used as given or refused,
 * a cached binary needs no Go, and without Go or a cached binary the failure is loud.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { BUILD_GO_TOOL, goToolPath, goToolPathAsync } from '../../build/tools/go-tools.ts'
import { noGo, scratchDirs } from '../support/scratch.ts'

const TOOLS = dirname(BUILD_GO_TOOL)
const TOOLS_TABLE = [
  {
    tool: 'kustomize',
    dir: 'kustomize',
    key: 'KUSTOMIZE_VERSION',
    override: 'EDGEOP_KUSTOMIZE',
    module: 'sigs.k8s.io/kustomize/kustomize/v5',
    pkg: 'sigs.k8s.io/kustomize/kustomize/v5',
  },
  {
    tool: 'helm',
    dir: 'helm',
    key: 'HELM_VERSION',
    override: 'EDGEOP_HELM',
    module: 'helm.sh/helm/v4',
    pkg: 'helm.sh/helm/v4/cmd/helm',
  },
  // One go.mod (and one cache directory) for both Prometheus commands.
  ...(['prometheus', 'promtool'] as const).map((tool) => ({
    tool,
    dir: 'prometheus',
    key: 'PROMETHEUS_VERSION',
    override: `EDGEOP_${tool.toUpperCase()}`,
    module: 'github.com/prometheus/prometheus',
    pkg: `github.com/prometheus/prometheus/cmd/${tool}`,
  })),
  {
    tool: 'jaeger',
    dir: 'jaeger',
    key: 'JAEGER_VERSION',
    override: 'EDGEOP_JAEGER',
    module: 'github.com/jaegertracing/jaeger',
    pkg: 'github.com/jaegertracing/jaeger/cmd/jaeger',
  },
] as const
const tempDir = scratchDirs('edgeop-go-tool-')
const versionOf = async (key: string) =>
  new RegExp(`^${key}=(\\S+)$`, 'm').exec(await readFile(join(TOOLS, 'versions.env'), 'utf8'))?.[1]

for (const t of TOOLS_TABLE) {
  test(`${t.tool}: versions.env names the version its go.mod pins (the cache key matches the build)`, async () => {
    const version = await versionOf(t.key)
    assert.ok(version, `versions.env has ${t.key}`)
    const gomod = await readFile(join(TOOLS, t.dir, 'go.mod'), 'utf8')
    assert.match(
      gomod,
      new RegExp(`^\\s*${t.module.replaceAll('.', '\\.')} v${version.replaceAll('.', '\\.')}\\b`, 'm'),
    )
    assert.match(gomod, new RegExp(`^tool ${t.pkg.replaceAll('.', '\\.')}$`, 'm'))
  })

  test(`${t.tool}: ${t.override} is used as is without Go; a relative path or a non-executable file is refused`, async () => {
    const dir = await tempDir()
    const fake = join(dir, t.tool)
    await writeFile(fake, '#!/bin/sh\n')
    await chmod(fake, 0o755)
    assert.equal(goToolPath(t.tool, noGo({ [t.override]: fake })), fake)
    const plain = join(dir, 'plain')
    await writeFile(plain, '')
    for (const bad of [t.tool, plain]) {
      assert.throws(
        () => goToolPath(t.tool, noGo({ [t.override]: bad })),
        new RegExp(`${t.tool} is unavailable`),
      )
    }
  })

  test(`${t.tool}: a cached binary is used without Go; with neither, a loud failure`, async () => {
    const cache = await tempDir()
    assert.throws(
      () => goToolPath(t.tool, noGo({ EDGEOP_BUILD_CACHE_DIR: cache })),
      new RegExp(`${t.tool} is unavailable`),
    )
    const dir = join(cache, 'bin', `${t.dir}-${await versionOf(t.key)}`)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, t.tool), '#!/bin/sh\n')
    await chmod(join(dir, t.tool), 0o755)
    assert.equal(goToolPath(t.tool, noGo({ EDGEOP_BUILD_CACHE_DIR: cache })), join(dir, t.tool))
  })
}

test('an unknown tool is a usage error of the script', () => {
  assert.throws(() => goToolPath('kubectl' as 'helm', noGo({})), /kubectl is unavailable/)
})

test('the async form (the test runner builds ahead) resolves the same path and rejects the same way', async () => {
  const cache = await tempDir()
  await assert.rejects(
    goToolPathAsync('helm', noGo({ EDGEOP_BUILD_CACHE_DIR: cache })),
    /helm is unavailable/,
  )
  const dir = join(cache, 'bin', `helm-${await versionOf('HELM_VERSION')}`)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'helm'), '#!/bin/sh\n')
  await chmod(join(dir, 'helm'), 0o755)
  assert.equal(await goToolPathAsync('helm', noGo({ EDGEOP_BUILD_CACHE_DIR: cache })), join(dir, 'helm'))
})

test("two builds of one tool at once run Go once: the second waits and takes the first one's binary (both built helm on a cold machine)", async () => {
  const dir = await tempDir()
  const cache = join(dir, 'cache')
  const calls = join(dir, 'go-calls')
  // A stand-in for Go: counts its builds, takes a second, writes an executable where -o says.
  await writeFile(
    join(dir, 'go'),
    `#!/bin/sh\necho build >> "${calls}"\nsleep 1\nwhile [ "$1" != -o ]; do shift; done\nprintf '#!/bin/sh\\n' > "$2"\nchmod +x "$2"\n`,
  )
  await chmod(join(dir, 'go'), 0o755)
  const env = { ...process.env, PATH: `${dir}:${process.env.PATH}`, EDGEOP_BUILD_CACHE_DIR: cache }
  const run = () => promisify(execFile)('bash', [BUILD_GO_TOOL, 'kustomize'], { env })
  const [a, b] = await Promise.all([run(), run()])
  assert.equal(a.stdout.trim().split('\n').at(-1), b.stdout.trim().split('\n').at(-1))
  assert.equal((await readFile(calls, 'utf8')).trim().split('\n').length, 1, 'Go ran once')
})
