/**
 * @module build/dependency-range — the library's tests against the lowest and the highest undici
 * and zod versions that package.json's ranges allow.
 *
 *     node build/dependency-range.ts [lowest|highest|undici@X zod@Y]
 *
 * A temporary copy of src/ and test/ gets a node_modules of its own: every dev dependency
 * linked from this checkout, except undici and zod, which are installed at the chosen
 * versions from the npm registry (or npm's cache). Then the client, config and objects unit
 * tests and the undici layout test run there with `node --test`.
 */
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const ROOT = join(import.meta.dirname, '..')
const run = promisify(execFile)

/** The runtime dependencies whose ranges are tested. */
export const RANGED = ['undici', 'zod'] as const
/** Which end of the ranges. */
export type RangeEnd = 'lowest' | 'highest'

/** Test files (relative to the root) that exercise undici and zod through the library. */
export async function rangeTestFiles(root = ROOT): Promise<string[]> {
  const dir = async (d: string) =>
    (await readdir(join(root, d))).filter((f) => f.endsWith('.test.ts')).map((f) => `${d}/${f}`)
  return [...(await dir('test/client')), ...(await dir('test/config')), 'test/objects/crd.test.ts']
}

/** The lowest version a caret range allows (`^8.1.0` → `8.1.0`); the ranges must be carets. */
export function lowestOf(range: string): string {
  const m = /^\^(\d+\.\d+\.\d+)$/.exec(range)
  if (!m) throw new Error(`dependency range ${JSON.stringify(range)} is not of the form ^X.Y.Z`)
  return m[1]!
}

/** The highest published version `range` allows, asked of the npm registry. */
export async function highestOf(pkg: string, range: string): Promise<string> {
  const { stdout } = await run('npm', ['view', `${pkg}@${range}`, 'version', '--json'], { cwd: ROOT })
  const v = JSON.parse(stdout) as string | string[]
  const all = Array.isArray(v) ? v : [v]
  const key = (s: string) => s.split('.').map(Number)
  const byVersion = (a: string, b: string) => {
    const [x, y] = [key(a), key(b)]
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!
  }
  const last = all
    .filter((s) => /^\d+\.\d+\.\d+$/.test(s))
    .sort(byVersion)
    .at(-1)
  if (!last) throw new Error(`no published ${pkg} matches ${range}`)
  return last
}

/** `name@version` for each ranged dependency at `end` of its range. */
export async function versionsAt(end: RangeEnd): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>
  }
  const out: Record<string, string> = {}
  for (const name of RANGED) {
    const range = pkg.dependencies[name]
    if (!range) throw new Error(`package.json has no dependency ${name}`)
    out[name] = end === 'lowest' ? lowestOf(range) : await highestOf(name, range)
  }
  return out
}

/** Lays out `dir` (src/, test/, node_modules/) with `versions` of the ranged dependencies. */
export async function prepareCopy(dir: string, versions: Record<string, string>): Promise<void> {
  await cp(join(ROOT, 'src'), join(dir, 'src'), { recursive: true })
  await cp(join(ROOT, 'test'), join(dir, 'test'), {
    recursive: true,
    filter: (src) => !/[\\/]test[\\/](go|bench[\\/]results|integration)([\\/]|$)/.test(src),
  })
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'edgeop-range', type: 'module', private: true }),
  )
  const deps = join(dir, 'deps')
  await mkdir(deps)
  await writeFile(join(deps, 'package.json'), JSON.stringify({ name: 'edgeop-range-deps', private: true }))
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      ...Object.entries(versions).map(([n, v]) => `${n}@${v}`),
    ],
    { cwd: deps },
  )
  const modules = join(dir, 'node_modules')
  await mkdir(modules)
  for (const entry of await readdir(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('.')) continue
    const from = (RANGED as readonly string[]).includes(entry)
      ? join(deps, 'node_modules', entry)
      : join(ROOT, 'node_modules', entry)
    await symlink(from, join(modules, entry), 'dir')
  }
}

/** Runs the range test files in `dir`; resolves with the exit code, the TAP output and its pass/fail counts. */
export async function runRangeTests(
  dir: string,
): Promise<{ code: number; output: string; pass: number; fail: number }> {
  const files = await rangeTestFiles(dir)
  return new Promise((resolve) => {
    // Without NODE_TEST_CONTEXT: inside a test run, the child would report to the parent's runner instead.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', ...files], { cwd: dir, env })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0)
    child.on('exit', (code) => resolve({ code: code ?? 1, output, pass: count('pass'), fail: count('fail') }))
  })
}

if (import.meta.main) {
  const { mkdtemp, rm } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const args = process.argv.slice(2)
  const versions =
    args[0] === 'lowest' || args[0] === 'highest' || args.length === 0
      ? await versionsAt((args[0] as RangeEnd | undefined) ?? 'lowest')
      : Object.fromEntries(args.map((a) => [a.slice(0, a.lastIndexOf('@')), a.slice(a.lastIndexOf('@') + 1)]))
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-range-'))
  try {
    await prepareCopy(dir, versions)
    const { code, output, pass, fail } = await runRangeTests(dir)
    process.stdout.write(
      `${output}\n${JSON.stringify(versions)}: ${pass} passed, ${fail} failed, exit ${code}\n`,
    )
    process.exitCode = code
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
