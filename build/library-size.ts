/**
 * @module build/library-size — `npm run size:library`: what edgeop costs a user who installs it and bundles it.
 *
 * 1. Installed size: `npm pack` of a clean checkout of HEAD, `npm install ./edgeop-x.tgz` in a
 *    new project, bytes of every file under its node_modules (apparent sizes, like `du -sb`).
 * 2. Bundle size of the mirror controller of docs/library.md ("Write your own controller"), minified ESM
 *    for Node, with esbuild plain (plus the require banner, without which it cannot start),
 *    esbuild with the shipped `edgeop()` plugin, and rolldown; gzip -9.
 * 3. The same for @kubernetes/client-node (this checkout's devDependency): a program that loads
 *    the default kubeconfig and runs a Pod informer, bundled the same ways.
 * 4. undici + zod + edgeop library bytes (esbuild metafile `bytesInOutput`, minified) in the
 *    plugin bundle against dist/edgeop.cjs (src/ minus operators, cli, main.ts); needs
 *    `npm run build` first.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ESM_REQUIRE_BANNER } from '../src/esbuild/esm-require-banner.ts'
import {
  type BundleResult,
  bundle,
  consumerProject,
  diskBytes,
  mirrorControllerExample,
  packedConsumer,
} from './package-consumer.ts'

const ROOT = join(import.meta.dirname, '..')

/** The client-node program: load the kubeconfig, run a Pod informer (the peer comparison on the README's first screen). */
const CLIENT_NODE_INFORMER = `import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node'
const kc = new KubeConfig()
kc.loadFromDefault()
const api = kc.makeApiClient(CoreV1Api)
const informer = makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces())
informer.on('add', (pod) => console.log(pod.metadata?.name))
await informer.start()
`

const fmt = (n: number) => n.toLocaleString('en-US')

/** Bytes in dist/edgeop.cjs by part: undici, zod, and edgeop's library code (src/ minus operators, cli, main). */
async function artifactParts(): Promise<Record<string, number>> {
  const meta = JSON.parse(await readFile(join(ROOT, 'dist/edgeop.meta.json'), 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>
  }
  const out: Record<string, number> = { undici: 0, zod: 0, edgeop: 0 }
  for (const o of Object.values(meta.outputs))
    for (const [file, { bytesInOutput }] of Object.entries(o.inputs)) {
      const dep = /node_modules\/(undici|zod)\//.exec(file)?.[1]
      if (dep) out[dep]! += bytesInOutput
      else if (/^src\//.test(file) && !/^src\/(operators|cli)\/|^src\/main\.ts$/.test(file))
        out.edgeop! += bytesInOutput
    }
  return out
}

const work = await mkdtemp(join(tmpdir(), 'edgeop-size-'))
try {
  const { tarball, project } = await packedConsumer(work)
  const installed = await diskBytes(join(project, 'node_modules'))
  const per = Object.fromEntries(
    await Promise.all(
      ['edgeop', 'undici', 'zod'].map(
        async (p) => [p, await diskBytes(join(project, 'node_modules', p))] as const,
      ),
    ),
  )
  process.stdout.write(
    `installed (npm install ./${tarball.slice(work.length + 1)}): ${fmt(installed)} bytes in node_modules` +
      ` (edgeop ${fmt(per.edgeop!)}, undici ${fmt(per.undici!)}, zod ${fmt(per.zod!)})\n`,
  )

  await writeFile(join(project, 'mirror.ts'), await mirrorControllerExample())
  const rows: [string, string, BundleResult][] = [
    [
      'edgeop mirror controller',
      'esbuild + banner',
      await bundle(project, 'mirror.ts', 'esbuild', 'esm', { banner: ESM_REQUIRE_BANNER }),
    ],
    [
      'edgeop mirror controller',
      'esbuild + edgeop()',
      await bundle(project, 'mirror.ts', 'esbuild+plugin', 'esm'),
    ],
    ['edgeop mirror controller', 'rolldown', await bundle(project, 'mirror.ts', 'rolldown', 'esm')],
  ]
  const peer = join(work, 'peer')
  await consumerProject(peer, tarball, ['@kubernetes/client-node'])
  await writeFile(join(peer, 'informer.ts'), CLIENT_NODE_INFORMER)
  rows.push(
    [
      'client-node Pod informer',
      'esbuild + banner',
      await bundle(peer, 'informer.ts', 'esbuild', 'esm', { banner: ESM_REQUIRE_BANNER }),
    ],
    ['client-node Pod informer', 'rolldown', await bundle(peer, 'informer.ts', 'rolldown', 'esm')],
  )
  process.stdout.write(
    '\n| program | bundler (minified ESM, node) | bytes | gzip -9 |\n|---|---|---:|---:|\n',
  )
  for (const [program, how, r] of rows)
    process.stdout.write(`| ${program} | ${how} | ${fmt(r.bytes)} | ${fmt(r.gzip)} |\n`)

  const mine = rows[1]![2].byOrigin!
  const theirs = await artifactParts()
  const user = { undici: mine.undici ?? 0, zod: mine.zod ?? 0, edgeop: mine.edgeop ?? 0 }
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0)
  process.stdout.write(
    '\n| part (minified bytes, esbuild metafile) | dist/edgeop.cjs | user bundle, esbuild + edgeop() |\n|---|---:|---:|\n',
  )
  for (const k of ['undici', 'zod', 'edgeop'] as const)
    process.stdout.write(`| ${k} | ${fmt(theirs[k]!)} | ${fmt(user[k])} |\n`)
  const ratio = sum(user) / sum(theirs)
  process.stdout.write(
    `| total | ${fmt(sum(theirs))} | ${fmt(sum(user))} (${(ratio * 100).toFixed(1)} %) |\n`,
  )
} finally {
  await rm(work, { recursive: true, force: true })
}
