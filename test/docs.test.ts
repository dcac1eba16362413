/**
 * The documentation points only at things that exist: in README.md, CONTRIBUTING.md, CHANGELOG.md,
 * docs/*.md (docs/api/ is generated and has its own test) and the READMEs of deploy/ and examples/,
 * every relative link reaches a file and, with an anchor, a heading of it; every repository path in a
 * code span exists; every `npm run` script is in package.json; every `node <file>` command names a
 * file. The flag and command tables of docs/operations.md list exactly what `edgeop --help` lists. The
 * examples that are compiled, bundled and run as written are read by build/doc-examples.ts.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import {
  codeSpanPaths,
  commandTable,
  flagTable,
  headingAnchors,
  headingSlug,
  helpCommands,
  helpFlags,
  nodeCommands,
  npmScripts,
  relativeLinks,
  unclosedFence,
} from './support/doc-references.ts'

const ROOT = resolve(import.meta.dirname, '..')
const run = promisify(execFile)

/** The file that holds the `edgeop` binary's command and flag reference. */
const FLAG_REFERENCE = 'docs/operations.md'

const markdownIn = (dir: string): string[] =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(dir, f))

const exampleReadmes = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(ROOT, 'examples', e.name, 'README.md')))
  .map((e) => join('examples', e.name, 'README.md'))

/** Every Markdown file checked, relative to the repository root. */
const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...markdownIn('docs'),
  'deploy/README.md',
  'deploy/agent/README.md',
  'examples/README.md',
  ...exampleReadmes,
]

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')

test('the checked documentation includes the README and every docs/ file but the generated API reference', () => {
  for (const f of [
    'README.md',
    'docs/library.md',
    'docs/operations.md',
    'docs/edge.md',
    'docs/benchmarks.md',
  ])
    assert.ok(DOCS.includes(f), f)
  assert.ok(!DOCS.some((f) => f.startsWith('docs/api/')))
})

test('every relative link reaches a file, and every anchor a heading of that file', () => {
  const broken: string[] = []
  let checked = 0
  for (const file of DOCS) {
    const fence = unclosedFence(read(file))
    if (fence !== undefined) broken.push(`${file}:${fence}: a code fence that is never closed`)
    for (const link of relativeLinks(read(file))) {
      checked++
      const target = link.path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), link.path)
      const where = `${file}:${link.line}: ${link.text}`
      if (relative(ROOT, target).startsWith('..')) broken.push(`${where} leaves the repository`)
      else if (!existsSync(target)) broken.push(`${where}: no such file`)
      else if (link.anchor !== undefined) {
        if (!target.endsWith('.md')) broken.push(`${where}: an anchor into a file that is not Markdown`)
        else if (!headingAnchors(readFileSync(target, 'utf8')).has(link.anchor))
          broken.push(`${where}: no heading with that anchor`)
      }
    }
  }
  assert.deepEqual(broken, [])
  assert.ok(checked > 100, `${checked} links checked`)
})

test('every repository path in a code span exists', () => {
  const missing: string[] = []
  let checked = 0
  for (const file of DOCS) {
    for (const path of codeSpanPaths(read(file))) {
      checked++
      if (!existsSync(join(ROOT, path.text))) missing.push(`${file}:${path.line}: ${path.text}`)
    }
  }
  assert.deepEqual(missing, [])
  assert.ok(checked > 100, `${checked} paths checked`)
})

test('every npm script and every file run with node exists', () => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
  // docs/scaffold.md runs the generated project's scripts too.
  const project = JSON.parse(read('templates/init/package.json')) as { scripts: Record<string, string> }
  const wrong: string[] = []
  for (const file of DOCS) {
    const text = read(file)
    const scripts = file === 'docs/scaffold.md' ? { ...pkg.scripts, ...project.scripts } : pkg.scripts
    for (const s of npmScripts(text))
      if (!(s.text in scripts)) wrong.push(`${file}:${s.line}: npm script ${s.text}`)
    for (const f of nodeCommands(text))
      if (!existsSync(join(ROOT, f.text))) wrong.push(`${file}:${f.line}: node ${f.text}`)
  }
  assert.deepEqual(wrong, [])
})

test(`the flag and command tables of ${FLAG_REFERENCE} list exactly the flags and commands of edgeop --help`, async () => {
  const main = join(ROOT, 'src/main.ts')
  const help = async (...args: string[]): Promise<string> =>
    (await run(process.execPath, [main, ...args, '--help'], { cwd: ROOT })).stdout
  const reference = read(FLAG_REFERENCE)
  const commands = commandTable(reference)
  assert.deepEqual([...commands.keys()].sort(), [...helpCommands(await help())].sort(), 'commands')
  const perCommand = new Map(
    await Promise.all([...commands.keys()].map(async (c) => [c, helpFlags(await help(c))] as const)),
  )
  const operatorFlags = new Set([...(perCommand.get('run') ?? []), ...(perCommand.get('agent') ?? [])])
  assert.ok(operatorFlags.size > 20, `${operatorFlags.size} flags of run and agent`)
  assert.deepEqual(
    [...flagTable(reference)].sort(),
    [...operatorFlags].sort(),
    'the flag table: run and agent',
  )
  const unknown = [...commands].flatMap(([command, flags]) =>
    flags.filter((f) => !perCommand.get(command)?.has(f)).map((f) => `${command} ${f}`),
  )
  assert.deepEqual(unknown, [], 'flags named in the command table')
})

test('headingSlug and headingAnchors follow GitHub: punctuation dropped, repeats numbered', () => {
  assert.equal(headingSlug('Typed built-ins: `edgeop/api`'), 'typed-built-ins-edgeopapi')
  assert.equal(headingSlug('Sharding with 3,000 AppServices'), 'sharding-with-3000-appservices')
  assert.equal(headingSlug('The `edgeop` binary'), 'the-edgeop-binary')
  const anchors = headingAnchors('# A\n## Proof\n```\n## not a heading\n```\n### Proof\n')
  assert.deepEqual([...anchors], ['a', 'proof', 'proof-1'])
})

test('the reference readers find links, paths, scripts and flags, and skip code blocks and placeholders', () => {
  const md = [
    'See [ops](docs/operations.md#the-edgeop-binary), [up](https://example.com) and ![x](dashboard.svg).',
    '```',
    '[in a block](nowhere.md)',
    '```',
    'Run `npm run build && node --test test/x.test.ts`, `npm test`, then `src/main.ts:12` and `test/bench/results/<date>/`.',
    '| flag | default |',
    '|---|---|',
    '| `--qps` / `--burst` | 5 |',
  ].join('\n')
  assert.deepEqual(
    relativeLinks(md).map((l) => [l.path, l.anchor]),
    [
      ['docs/operations.md', 'the-edgeop-binary'],
      ['dashboard.svg', undefined],
    ],
  )
  assert.deepEqual(
    codeSpanPaths(md).map((p) => p.text),
    ['test/x.test.ts', 'src/main.ts'],
  )
  assert.deepEqual(
    npmScripts(md).map((s) => s.text),
    ['build', 'test'],
  )
  assert.deepEqual(
    nodeCommands(md).map((s) => s.text),
    ['test/x.test.ts'],
  )
  assert.deepEqual([...flagTable(md)], ['--qps', '--burst'])
  assert.equal(unclosedFence(md), undefined)
  assert.equal(unclosedFence('text\nnpm ci\n```\n[a](b.md)\n'), 3)
})
