/**
 * The types a user's operator is written against, compiled as a user compiles them (`strict`,
 * `exactOptionalPropertyTypes`): user-operator-types.ts must type-check, and each of its
 * `@ts-expect-error` lines must fail (tsc reports an unused directive otherwise).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const ROOT = join(import.meta.dirname, '../..')

test('F7: a user’s operator type-checks under exactOptionalPropertyTypes, with types inferred from its resources', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-user-types-'))
  after(() => rm(dir, { recursive: true, force: true }))
  const tsconfig = join(dir, 'tsconfig.json')
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: {
        exactOptionalPropertyTypes: true,
        noEmit: true,
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      include: [],
      files: [join(import.meta.dirname, 'user-operator-types.ts')],
    }),
  )
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  const out = await new Promise<string>((resolve) =>
    execFile(tsc, ['-p', tsconfig], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve(err ? `${stdout}${stderr}` : ''),
    ),
  )
  // Only the fixture's own diagnostics count: edgeop's sources are checked by `npm run typecheck`.
  const mine = out.split('\n').filter((l) => l.includes('user-operator-types.ts') || l.startsWith('error'))
  assert.deepEqual(mine, [])
})
