/**
 * `edgeop init <dir>` from the sources (the packed package's run is test/integration/scaffold.test.ts):
 * the files it creates, the dependencies it writes, and its refusal of a directory that holds anything.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { edgeopDependency, fillTemplate, projectName } from '../../src/cli/init-command.ts'

const BIN = join(import.meta.dirname, '../../src/cli/bin.ts')
const ROOT_PACKAGE = join(import.meta.dirname, '../../package.json')
const exec = promisify(execFile)
let work: string

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'edgeop-init-'))
})
after(() => rm(work, { recursive: true, force: true }))

/** Runs the bin with `args` in `work`; resolves with its exit code and output, failing or not. */
function edgeop(...args: string[]) {
  return exec(process.execPath, [BIN, ...args], { cwd: work }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort()
}

test('init creates the project: config, operator, test, build, image, with the dot files restored and every placeholder filled', async () => {
  const r = await edgeop('init', 'My_Operator')
  assert.equal(r.code, 0, r.stderr)
  const dir = join(work, 'My_Operator')
  assert.deepEqual(await filesUnder(dir), [
    '.dockerignore',
    '.gitignore',
    'Dockerfile',
    'README.md',
    'build.ts',
    'image.ts',
    'package.json',
    'src/main.ts',
    'src/widget.ts',
    'test/widget.test.ts',
    'tsconfig.json',
  ])
  for (const f of await filesUnder(dir)) assert.doesNotMatch(await readFile(join(dir, f), 'utf8'), /\{\{/, f)
  const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))
  const ours = JSON.parse(await readFile(ROOT_PACKAGE, 'utf8'))
  assert.equal(pkg.name, 'my-operator')
  assert.equal(pkg.dependencies.edgeop, `^${ours.version}`, 'the running CLI version')
  assert.equal(pkg.dependencies.zod, ours.dependencies.zod)
  assert.equal(pkg.devDependencies.esbuild, `^${ours.devDependencies.esbuild}`)
  assert.match(await readFile(join(dir, 'src/main.ts'), 'utf8'), /name: 'my-operator'/)
  assert.match(r.stdout, /created 11 files in My_Operator/)
})

test('--edgeop with a tarball path writes it as an absolute file: dependency', async () => {
  const r = await edgeop('init', 'from-tarball', '--edgeop', './edgeop-0.1.0.tgz')
  assert.equal(r.code, 0, r.stderr)
  const pkg = JSON.parse(await readFile(join(work, 'from-tarball/package.json'), 'utf8'))
  assert.equal(pkg.dependencies.edgeop, `file:${join(work, 'edgeop-0.1.0.tgz')}`)
})

test('init refuses a directory that holds anything, with one line, exit 2 and nothing written', async () => {
  const dir = join(work, 'taken')
  await mkdir(dir)
  await writeFile(join(dir, 'notes.txt'), 'mine')
  const r = await edgeop('init', 'taken')
  assert.equal(r.code, 2)
  assert.equal(r.stderr, 'edgeop: init: "taken" is not empty (1 entries): give a new or empty directory\n')
  assert.deepEqual(await readdir(dir), ['notes.txt'])
})

test('init without a directory, or with two, is refused with exit 2', async () => {
  const none = await edgeop('init')
  assert.equal(none.stderr, 'edgeop: init: expected one directory, got 0 arguments\n')
  assert.equal(none.code, 2)
  assert.equal((await edgeop('init', 'a', 'b')).code, 2)
})

test('project names, dependency specs and placeholders', () => {
  assert.equal(projectName('/x/Widget Operator!'), 'widget-operator')
  assert.equal(projectName('___'), 'operator')
  assert.equal(edgeopDependency('^0.2.0', '/w'), '^0.2.0')
  assert.equal(edgeopDependency('/t/edgeop.tgz', '/w'), 'file:/t/edgeop.tgz')
  assert.equal(edgeopDependency('../edgeop', '/w/p'), 'file:/w/edgeop')
  assert.equal(fillTemplate('{{name}}@{{version:zod}}', 'op', { zod: '^4' }), 'op@^4')
  assert.throws(() => fillTemplate('{{version:left-pad}}', 'op', {}), /template: no version of left-pad/)
})
