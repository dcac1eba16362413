/**
 * @module test-files — which files `build/test.ts` runs.
 *
 * unit: every `test/**\/*.test.ts` outside `test/integration/` and `test/e2e/`;
 * integration: `test/integration/**\/*.test.ts`, and `examples/**\/*.test.ts` (the examples start
 * real control planes with `edgeop/testing`, so they need the binaries and the built dist/).
 * Vendored and generated trees are skipped.
 */
import { readdir } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'

/** The suites the runner knows. */
export type Suite = 'unit' | 'integration'

/** Directories under `test/` that never hold our test files (Go tool modules, bench output, dependencies). */
const SKIPPED_DIRS = new Set(['node_modules', 'go', 'results'])

/** Top-level folders of `test/` that are not unit tests. */
const NON_UNIT_ROOTS = new Set(['integration', 'e2e'])

async function walk(dir: string, out: string[]): Promise<void> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch {
    return
  }
  for (const e of entries) {
    const path = join(dir, e.name)
    if (e.isDirectory()) {
      if (!SKIPPED_DIRS.has(e.name) && !e.name.startsWith('.')) await walk(path, out)
    } else if (e.isFile() && e.name.endsWith('.test.ts')) {
      out.push(path)
    }
  }
}

/** The test files of `suite` under `<root>/test` (and `<root>/examples` for integration), relative to `root`, sorted. */
export async function findTestFiles(root: string, suite: Suite): Promise<string[]> {
  const all: string[] = []
  await walk(join(root, 'test'), all)
  const tests = all
    .map((p) => relative(root, p))
    .filter((p) => {
      const top = relative('test', p).split(sep)[0] ?? ''
      return suite === 'integration' ? top === 'integration' : !NON_UNIT_ROOTS.has(top)
    })
  if (suite === 'unit') return tests.sort()
  const examples: string[] = []
  await walk(join(root, 'examples'), examples)
  return [...tests, ...examples.map((p) => relative(root, p))].sort()
}
