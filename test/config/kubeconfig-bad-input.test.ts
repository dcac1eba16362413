/**
 * Bad kubeconfig input gets one clear, bounded error naming the file (and line and column
 * where there is one): oversized files, echoed input, empty files, NUL and other control
 * characters, invalid UTF-8.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { MAX_KUBECONFIG_BYTES } from '../../src/config/kubeconfig-text.ts'
import { parseYaml } from '../../src/config/yaml.ts'
import { memoryFiles } from './support/helpers.ts'

const dir = mkdtempSync(path.join(tmpdir(), 'edgeop-bad-kubeconfig-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function file(name: string, content: string | Buffer): string {
  const f = path.join(dir, name)
  writeFileSync(f, content)
  return f
}

const CLUSTER = 'clusters:\n- name: c\n  cluster:\n    server: https://h\n'

async function loadError(paths: string[], readFile?: Parameters<typeof loadKubeconfig>[0]['readFile']) {
  const err = await loadKubeconfig({ paths, ...(readFile ? { readFile } : {}) }).then(
    () => assert.fail('expected an error'),
    (e: unknown) => e as Error & { code: string },
  )
  return err
}

test('a huge scalar is never echoed: names and keys in messages are cut and their length given', async () => {
  const long = 'x'.repeat(1024 * 1024)
  const missing = await loadError([file('long-context.yaml', `${CLUSTER}current-context: ${long}\n`)])
  assert.equal(missing.code, 'EDGEOP_ERR_CONFIG')
  assert.match(missing.message, /^context "x{80}…" \(1048576 characters\) not found in \//)
  assert.ok(missing.message.length < 400, `message of ${missing.message.length} characters`)

  const twice = `a:\n  ${long}: 1\n  ${long}: 2\n`
  assert.throws(
    () => parseYaml(twice, { file: 'k' }),
    (e: Error) => {
      assert.equal(
        e.message,
        `k:3:3: key "${'x'.repeat(80)}…" (1048576 characters) appears twice with different values (lines 2 and 3)`,
      )
      return true
    },
  )
  assert.throws(
    () => parseYaml(`a: *${long}\n`),
    (e: Error) => e.message.length < 300,
  )

  const names = Array.from({ length: 500 }, (_, i) => `- name: ctx-${i}\n  context: {cluster: c}\n`).join('')
  const many = await loadError([
    file('many-contexts.yaml', `${CLUSTER}contexts:\n${names}current-context: nope\n`),
  ])
  assert.match(many.message, /\(contexts: "ctx-0", .*"ctx-9" and 490 more\)$/)
})

test('a kubeconfig over MAX_KUBECONFIG_BYTES is refused by name and cap, without reading it whole', async () => {
  assert.equal(MAX_KUBECONFIG_BYTES, 8 * 1024 * 1024)
  const tooLarge = (f: string, size = '') =>
    `kubeconfig ${f} is larger${size} than the 8 MiB edgeop reads; a kubeconfig is normally a few KiB: is this the right file?`
  const over = file('over.yaml', `${CLUSTER}#${'x'.repeat(MAX_KUBECONFIG_BYTES - CLUSTER.length)}`)
  const e = await loadError([over])
  assert.deepEqual(
    { code: e.code, message: e.message },
    { code: 'EDGEOP_ERR_CONFIG', message: tooLarge(over) },
  )
  // /dev/zero never ends: only a bounded read can answer at all.
  assert.equal((await loadError(['/dev/zero'])).message, tooLarge('/dev/zero'))
  // An injected reader's text is held to the same cap.
  const virtual = memoryFiles({ '/v/config': 'é'.repeat(MAX_KUBECONFIG_BYTES / 2 + 1) })
  assert.equal(
    (await loadError(['/v/config'], virtual)).message,
    tooLarge('/v/config', ` (${MAX_KUBECONFIG_BYTES + 2} bytes)`),
  )
  // Exactly at the cap is read and parsed (here: it has no contexts).
  const at = file('at-cap.yaml', `${CLUSTER}#${'x'.repeat(MAX_KUBECONFIG_BYTES - CLUSTER.length - 1)}`)
  assert.match((await loadError([at])).message, /^current-context is not set in /)
})
