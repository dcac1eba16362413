/**
 * The reference operators are meant to be copied: each of their imports of the library is a public entry
 * point a user can write as `edgeop/<subpath>` (`../../client/index.ts` is `edgeop/client`). Any other
 * library file (a folder's inner file, or a room without a subpath such as transport or codec) is
 * library-internal, so an import of it here would not survive the copy; this test fails on one.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { ROOT } from '../../build/artifact.ts'

const OPERATORS = join(ROOT, 'src/operators')

test('the reference operators import the library only as `edgeop/<subpath>` would', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>
  }
  const subpathOf = new Map<string, string>()
  for (const [subpath, target] of Object.entries(pkg.exports))
    if (typeof target !== 'string' && target.types)
      subpathOf.set(target.types.replace(/^\.\/dist\/types\//, 'src/').replace(/\.d\.ts$/, '.ts'), subpath)
  const violations: string[] = []
  let imports = 0
  for (const entry of readdirSync(OPERATORS, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
    const file = join(entry.parentPath, entry.name)
    const own = relative(OPERATORS, file).split('/')[0]!
    for (const m of readFileSync(file, 'utf8').matchAll(
      /^\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm,
    )) {
      const target = relative(ROOT, resolve(entry.parentPath, m[1]!))
      if (target.startsWith(`src/operators/${own}/`)) continue
      imports++
      const subpath = subpathOf.get(target)
      if (!subpath) violations.push(`${relative(ROOT, file)} → ${target} (no edgeop/<subpath> for it)`)
    }
  }
  assert.deepEqual(violations, [])
  assert.ok(imports > 20, `imports of the library checked: ${imports}`)
})
