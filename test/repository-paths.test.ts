/**
 * edgeop is whole in its own repository: no file in src/, test/, build/, deploy/, .ci/, docs/,
 * README.md, CONTRIBUTING.md, CHANGELOG.md or package.json reads or cites a path outside the repository root. The
 * scanner (test/support/path-escapes.ts) is proved on each way a path can be spelled, with
 * offending samples that land outside a fake root `/r`, and on near misses that stay inside.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { test } from 'node:test'
import { findPathEscapes, scanRepository } from './support/path-escapes.ts'

const ROOT_DIR = resolve(import.meta.dirname, '..')
const FAKE_ROOT = '/r'
/** `n` parent segments, spelled so that this file's own text does not climb. */
const up = (n: number): string => Array.from({ length: n }, () => '..').join('/')
/** A one-line sample as `file` (relative to the fake root) would contain it. */
const escapesIn = (file: string, line: string): string[] =>
  findPathEscapes(FAKE_ROOT, `${FAKE_ROOT}/${file}`, `// before\n${line}\n`).map(
    (e) => `${e.line}: ${e.reason}`,
  )

test('the repository: no file reads or cites a path outside it', () => {
  const { files, escapes } = scanRepository(ROOT_DIR)
  assert.ok(files > 300, `scanned ${files} files`)
  assert.deepEqual(
    escapes.map((e) => `${e.file}:${e.line}: ${e.reason}`),
    [],
  )
})

test('scanner: join/resolve from the file directory, as one literal or as comma-separated segments', () => {
  const file = 'test/config/corpus.test.ts' // three levels deep: three `..` reach the root
  const q = (s: string): string => `'${s}'`
  const outside = [
    `const C = path.resolve(import.meta.dirname, ${q(`${up(3)}/elsewhere/kubeconfigs`)})`,
    `const C = join(import.meta.dirname, ${[up(1), up(1), up(1), 'elsewhere'].map(q).join(', ')})`,
    `const C = join(HERE, "${up(4)}")`,
    `import { x } from ${q(`${up(3)}/other-repo/x.ts`)}`,
    `const u = new URL(${q(up(3))}, import.meta.url)`,
    `const t = \`\${import.meta.dirname}/${up(3)}/x\``,
  ]
  for (const line of outside) assert.equal(escapesIn(file, line).length, 1, line)
  const inside = [
    `const C = path.resolve(import.meta.dirname, ${q(`${up(2)}/src/config`)})`,
    `const C = join(import.meta.dirname, ${[up(1), up(1), 'deploy'].map(q).join(', ')})`,
    `import { x } from ${q(`${up(2)}/src/x.ts`)}`,
    `const s = ${q('a sentence with .. and / in it')}`,
  ]
  for (const line of inside) assert.deepEqual(escapesIn(file, line), [], line)
})

test('scanner: paths built from ROOT resolve against the repository root', () => {
  const file = 'test/a/b/c/d.test.ts'
  assert.equal(escapesIn(file, `join(ROOT, '${up(1)}', 'x')`).length, 1)
  assert.equal(escapesIn(file, `const p = \`\${ROOT}/${up(1)}/x\``).length, 1)
  // The same literal from the file's directory would stay inside: the base matters.
  assert.deepEqual(escapesIn(file, `join(import.meta.dirname, '${up(1)}', 'x')`), [])
  assert.deepEqual(escapesIn(file, `join(ROOT, 'dist', '${up(1)}')`), [])
})

test('scanner: shell scripts climbing from $(dirname "$0") or $here', () => {
  const dollar = '$'
  assert.equal(escapesIn('.ci/run', `cd "${dollar}(dirname "${dollar}0")/${up(2)}"`).length, 1)
  assert.equal(escapesIn('build/tools/x.sh', `. "${dollar}here/${up(3)}/versions.env"`).length, 1)
  assert.deepEqual(escapesIn('.ci/run', `cd "${dollar}(dirname "${dollar}0")/${up(1)}"`), [])
})

test('scanner: Markdown links and backticked paths, relative to the Markdown file', () => {
  assert.equal(escapesIn('README.md', `(see [peers](${up(1)}/notes/peers.md))`).length, 1)
  assert.equal(escapesIn('README.md', `bundles (\`${up(1)}/notes/peers.md\`).`).length, 1)
  assert.deepEqual(escapesIn('docs/guide.md', `see \`${up(1)}/README.md\` and [src](test/${up(2)}/src)`), [])
  // Prose apostrophes are not quotes in Markdown.
  assert.deepEqual(escapesIn('README.md', `it's ${up(3)} isn't a path here`), [])
})

test("scanner: the development machine's shared area is named, however it is reached", () => {
  const work = ['', 'work', 'shared', 'reference', 'peers.md'].join('/')
  const shared = `${up(1)}/${'shared'}/reference/peers.md`
  assert.match(escapesIn('src/a.ts', `const f = '${work}'`).join(), /machine-wide work directory/)
  // In a file deep enough that `..` stays inside, naming the shared folder still offends.
  assert.match(escapesIn('test/a/b.md', `(\`${shared}\`)`).join(), /shared folder beside the repository/)
  assert.deepEqual(escapesIn('src/a.ts', `const f = '/etc/passwd'; const w = 'network/x'`), [])
  assert.deepEqual(escapesIn('src/a.ts', `const shared = join(dir, 'shared')`), [])
})

test('scanner: a report names the file and line and never echoes a long line whole', () => {
  const long = `const C = join(import.meta.dirname, '${up(40)}')`
  const [found] = findPathEscapes(FAKE_ROOT, `${FAKE_ROOT}/src/a.ts`, long)
  assert.equal(found?.file, 'src/a.ts')
  assert.equal(found?.line, 1)
  assert.ok((found?.reason.length ?? 0) < 120, found?.reason)
})
