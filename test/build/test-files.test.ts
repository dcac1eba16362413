import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { findTestFiles } from '../../build/test-files.ts'

test('unit = test/**/*.test.ts outside integration/ and e2e/; integration = test/integration/** and examples/**', async () => {
  const root = await mkdtemp(join(tmpdir(), 'edgeop-test-files-'))
  try {
    for (const file of [
      'test/core/a.test.ts',
      'test/core/helper.ts',
      'test/queue/deep/b.test.ts',
      'test/integration/c.test.ts',
      'test/integration/sub/d.test.ts',
      'test/e2e/e.test.ts',
      'test/controlplane/go/k8s/x.test.ts',
      'test/node_modules/y.test.ts',
      'test/unit-integration/f.test.ts',
      'examples/envtest/g.test.ts',
      'examples/envtest/helper.ts',
      'examples/node_modules/z.test.ts',
    ]) {
      await mkdir(dirname(join(root, file)), { recursive: true })
      await writeFile(join(root, file), '')
    }
    assert.deepEqual(await findTestFiles(root, 'unit'), [
      'test/core/a.test.ts',
      'test/queue/deep/b.test.ts',
      'test/unit-integration/f.test.ts',
    ])
    assert.deepEqual(await findTestFiles(root, 'integration'), [
      'examples/envtest/g.test.ts',
      'test/integration/c.test.ts',
      'test/integration/sub/d.test.ts',
    ])
  } finally {
    await rm(root, { recursive: true, force: true })
  }
})
