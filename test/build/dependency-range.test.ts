/**
 * package.json declares undici and zod as caret ranges; this installs the lowest and the
 * highest version each range allows (npm registry or npm's cache only) into a temporary copy
 * of src/ and test/ and runs the client, config and objects unit tests there, including the
 * undici layout pin (test/transport/undici-layout.test.ts). A range whose low end no longer works
 * (a newer zod API used, an undici file moved) fails here.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { prepareCopy, type RangeEnd, runRangeTests, versionsAt } from '../../build/dependency-range.ts'

/**
 * Each case installs two packages and runs three test folders in a child: 22–65 s on a warm machine,
 * over the runner's 120 s per-test default on a cold one (the control plane's Go build shares the
 * two cores meanwhile; a cold CI run timed out at 120 s). 600 s still ends a hung run.
 */
const RANGE_TEST_TIMEOUT_MS = 600_000

for (const end of ['lowest', 'highest'] as RangeEnd[]) {
  test(`the library's tests pass with the ${end} undici and zod the ranges allow`, {
    timeout: RANGE_TEST_TIMEOUT_MS,
  }, async (t) => {
    const versions = await versionsAt(end)
    t.diagnostic(JSON.stringify(versions))
    const dir = await mkdtemp(join(tmpdir(), `edgeop-range-${end}-`))
    t.after(() => rm(dir, { recursive: true, force: true }))
    await prepareCopy(dir, versions)
    const { code, output, pass, fail } = await runRangeTests(dir)
    const failures = output.split('\n').filter((l) => l.startsWith('not ok'))
    assert.deepEqual(failures, [], `with ${JSON.stringify(versions)}`)
    assert.equal(fail, 0)
    assert.ok(pass >= 100, `only ${pass} tests ran`)
    assert.equal(code, 0)
  })
}
