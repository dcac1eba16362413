/**
 * The published types (dist/types, built by `npm run build` before the tests) as a consumer
 * compiles them: every TypeScript in package.json's devDependencies (`typescript`, the
 * project's own, and the `typescript-X.Y` npm aliases) × moduleResolution `nodenext` and
 * `bundler`, with `strict`, `exactOptionalPropertyTypes` and `skipLibCheck: false` (our .d.ts
 * files are checked too), type-checks the README's example and the controller of docs/library.md
 * as written, and every `examples/**\/*.ts` (which import `'edgeop'` by name, as a consumer does).
 *
 * The consumer is a temporary project whose `node_modules/edgeop` holds links to this
 * package's package.json and dist/types, beside links to the runtime dependencies and
 * `@types/node` (what `npm install edgeop` gives). One tsc process per cell, all cells at once.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import {
  access,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { docExample, LIBRARY_CONTROLLER_EXAMPLE, README_EXAMPLE } from '../../build/doc-examples.ts'

const ROOT = join(import.meta.dirname, '../..')

/**
 * The oldest TypeScript the published types support, and the oldest alias the matrix must hold.
 * Our declarations expose zod/mini schemas (`defineCrd`, the kubeconfig schema), and zod 4's
 * declarations use `NoInfer`, added in TypeScript 5.4: 5.2 and 5.3 fail with "Cannot find name
 * 'NoInfer'" under `skipLibCheck: false`; 5.0 and 5.1 also fail on @types/node 24
 * (`esnext.disposable`, added in 5.2).
 */
const OLDEST_SUPPORTED = '5.4'

/** The module resolutions a consumer of an ESM-only package on Node uses. */
const RESOLUTIONS = ['nodenext', 'bundler'] as const
type Resolution = (typeof RESOLUTIONS)[number]

/** The `module` each resolution is paired with (bundler requires an ES module target). */
const MODULE_FOR: Record<Resolution, string> = { nodenext: 'nodenext', bundler: 'esnext' }

/** The compiler options under test; `files` are added per project. */
const CONSUMER_OPTIONS = {
  target: 'es2022',
  lib: ['es2023'],
  types: ['node'],
  strict: true,
  exactOptionalPropertyTypes: true,
  skipLibCheck: false,
  noEmit: true,
  // Examples that run with Node's type stripping import siblings as './x.ts'.
  allowImportingTsExtensions: true,
}

interface Compiler {
  /** The devDependency name, e.g. `typescript-5.4`. */
  pkg: string
  version: string
  tsc: string
}

const run = (file: string, args: string[], cwd: string) =>
  new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [file, ...args],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
        resolve({ code, output: `${stdout}${stderr}` })
      },
    )
  })

/** Every TypeScript package in devDependencies, installed: `typescript` and `typescript-X.Y` aliases. */
async function compilers(): Promise<Compiler[]> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
  const names = Object.keys(pkg.devDependencies).filter((n) => /^typescript(-\d+\.\d+)?$/.test(n))
  const out: Compiler[] = []
  for (const name of names) {
    const dir = join(ROOT, 'node_modules', name)
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      version: string
      bin: { tsc: string }
    }
    out.push({ pkg: name, version: manifest.version, tsc: join(dir, manifest.bin.tsc) })
  }
  return out
}

/** `examples/**\/*.ts` relative to the repository root, sorted; none when there is no examples/. */
async function exampleFiles(): Promise<string[]> {
  const dir = join(ROOT, 'examples')
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.parentPath.includes('node_modules'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort()
}

/** The consumer project: the documented examples, examples/, node_modules links, one tsconfig per resolution. */
async function consumerProject(dir: string, examples: string[]): Promise<string[]> {
  const modules = join(dir, 'node_modules')
  await mkdir(join(modules, 'edgeop/dist'), { recursive: true })
  await symlink(join(ROOT, 'package.json'), join(modules, 'edgeop/package.json'))
  await symlink(join(ROOT, 'dist/types'), join(modules, 'edgeop/dist/types'), 'dir')
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>
  }
  for (const dep of [...Object.keys(pkg.dependencies), '@types/node']) {
    await mkdir(dirname(join(modules, dep)), { recursive: true })
    await symlink(join(ROOT, 'node_modules', dep), join(modules, dep), 'dir')
  }
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`)
  await writeFile(join(dir, 'library-controller.ts'), await docExample(ROOT, LIBRARY_CONTROLLER_EXAMPLE))
  await writeFile(join(dir, 'readme-example.ts'), await docExample(ROOT, README_EXAMPLE))
  if (examples.length > 0) await cp(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true })
  const files = ['library-controller.ts', 'readme-example.ts', ...examples]
  for (const resolution of RESOLUTIONS) {
    const compilerOptions = {
      ...CONSUMER_OPTIONS,
      module: MODULE_FOR[resolution],
      moduleResolution: resolution,
    }
    await writeFile(
      join(dir, `tsconfig.${resolution}.json`),
      JSON.stringify({ compilerOptions, files }, null, 2),
    )
  }
  return files
}

const all = await compilers()
let project = ''
let files: string[] = []

describe('consumer types across TypeScript versions', {
  concurrency: Math.max(2, availableParallelism()),
}, () => {
  before(async () => {
    await access(join(ROOT, 'dist/types/index.d.ts')).catch(() => {
      throw new Error('dist/types is missing: run `npm run build` first (npm test does)')
    })
    project = await mkdtemp(join(tmpdir(), 'edgeop-typematrix-'))
    files = await consumerProject(project, await exampleFiles())
  })
  after(() => rm(project, { recursive: true, force: true }))

  test(`the matrix holds the project's TypeScript and ${OLDEST_SUPPORTED}`, () => {
    const pkgs = all.map((c) => c.pkg)
    assert.ok(pkgs.includes('typescript'), 'the project TypeScript')
    assert.ok(pkgs.includes(`typescript-${OLDEST_SUPPORTED}`), `an npm alias typescript-${OLDEST_SUPPORTED}`)
    assert.ok(files.includes('library-controller.ts'), 'the controller of docs/library.md is in the project')
    assert.ok(files.includes('readme-example.ts'), "the README's example is in the project")
  })

  test("`tsc` on PATH (npm run typecheck) is the project's TypeScript, not an alias's", async () => {
    const [bin, own] = await Promise.all([
      realpath(join(ROOT, 'node_modules/.bin/tsc')),
      realpath(join(ROOT, 'node_modules/typescript/bin/tsc')),
    ])
    assert.equal(bin, own)
  })

  for (const compiler of all)
    for (const resolution of RESOLUTIONS)
      test(`TypeScript ${compiler.version}, moduleResolution ${resolution}: the documented examples and examples/ type-check`, async () => {
        const { code, output } = await run(
          compiler.tsc,
          ['-p', `tsconfig.${resolution}.json`, '--pretty', 'false', '--listFiles'],
          project,
        )
        const lines = output.split('\n').filter((l) => l !== '')
        // --listFiles prints absolute paths; diagnostics name files relative to the project.
        const errors = lines.filter((l) => !isAbsolute(l))
        assert.deepEqual(errors, [], `TypeScript ${compiler.version} (${resolution}) reported errors`)
        assert.equal(code, 0, `tsc exit code\n${output}`)
        // Not vacuous: our declarations and every consumer file were part of the program.
        const listed = new Set(lines.map((l) => relative(ROOT, l)))
        assert.ok(listed.has('dist/types/index.d.ts'), `dist/types/index.d.ts was checked\n${output}`)
        for (const file of files)
          assert.ok(
            lines.some((l) => l.endsWith(`/${file}`)),
            `${file} was checked (${compiler.version}, ${resolution})`,
          )
      })
})
