/**
 * Every flag of the binary reads an `EDGEOP_<FLAG>` environment variable, so no variable the build and
 * test scripts read may have such a name. Regression: the build cache was `EDGEOP_CACHE_DIR`, which is
 * also `--cache-dir`'s variable: a cold CI run that set it to move the build cache made every operator
 * and agent the tests started take the build cache as its snapshot directory, and the second one
 * refused to start (its lock was taken).
 */
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { envName } from '../../src/cli/flags/flags.ts'
import { OPERATOR_FLAGS, WEBHOOK_FLAGS } from '../../src/cli/flags/operator-flags.ts'
import { APPSERVICE_FLAGS } from '../../src/operators/appservice/operator.ts'
import { AGENT_FLAGS } from '../../src/operators/nodeconfig/agent.ts'

const ROOT = join(import.meta.dirname, '../..')
/** Where the build and test tooling reads its own variables. */
const TOOLING = ['build', 'test/controlplane', 'src/testing', 'test/support', '.ci']

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true }))
    if (e.isFile() && /\.(ts|sh|env)$|^run$/.test(e.name)) out.push(join(e.parentPath, e.name))
  return out
}

test('no variable of the build and test tooling is also the environment variable of a flag', async () => {
  const flagVars = new Set(
    [OPERATOR_FLAGS, WEBHOOK_FLAGS, APPSERVICE_FLAGS, AGENT_FLAGS].flatMap((set) =>
      Object.keys(set).map((f) => envName(f)),
    ),
  )
  assert.ok(flagVars.has('EDGEOP_CACHE_DIR'), 'the flag variables are read')
  const tooling = new Set<string>()
  for (const dir of TOOLING)
    for (const file of await filesUnder(dir))
      for (const m of (await readFile(file, 'utf8')).matchAll(/\bEDGEOP_[A-Z0-9_]+\b/g)) tooling.add(m[0])
  assert.ok(
    tooling.has('EDGEOP_BUILD_CACHE_DIR') && tooling.has('EDGEOP_TEST_ASSETS'),
    'the tooling variables are read',
  )
  assert.deepEqual(
    [...tooling].filter((v) => flagVars.has(v)),
    [],
  )
})
