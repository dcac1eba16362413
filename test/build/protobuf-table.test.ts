import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { generateTable, TABLE_PARTS, tablePath } from '../../build/gen-protobuf.ts'

const ROOT = join(import.meta.dirname, '../..')

// Go builds the generator from the module proxy's k8s.io/api on a cold machine: allow for the download.
test('src/codec/protobuf/messages.generated.ts and kinds.generated.ts are what build/protobuf-schema generates now (npm run gen:protobuf)', {
  timeout: 600_000,
}, () => {
  for (const part of TABLE_PARTS) {
    const committed = readFileSync(tablePath(part), 'utf8')
    assert.ok(
      committed === generateTable(part),
      `the committed ${part} table is stale: run npm run gen:protobuf`,
    )
  }
})

test('the generator pins the same k8s.io/api as the test control plane it is checked against', () => {
  const pin = (file: string, mod: string): string | undefined =>
    new RegExp(`^\\s*${mod.replace('.', '\\.')} (v\\S+)`, 'm').exec(
      readFileSync(join(ROOT, file), 'utf8'),
    )?.[1]
  for (const mod of ['k8s.io/api', 'k8s.io/apimachinery']) {
    const ours = pin('build/protobuf-schema/go.mod', mod)
    assert.ok(ours)
    assert.equal(
      ours,
      pin('test/controlplane/go/k8s/go.mod', `${mod} =>`) ?? pin('test/controlplane/go/k8s/go.mod', mod),
    )
  }
})
