/**
 * Billion-laughs shapes: aliases that expand exponentially are refused while parsing, by a count of
 * the nodes they add, before anything walks, compares or serialises the expansion, so the
 * comparisons of repeated keys stay linear in the input.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { MAX_YAML_ALIAS_NODES, parseYaml } from '../../src/config/yaml/yaml.ts'

const dir = mkdtempSync(path.join(tmpdir(), 'edgeop-yaml-laughs-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** `levels` anchors, each a flow sequence of `width` aliases of the one before (the first of `width` scalars). */
function laughs(levels: number, width: number, prefix = 'l', indent = ''): string {
  const lines = [`${indent}${prefix}0: &${prefix}0 [${Array(width).fill('lol').join(', ')}]`]
  for (let i = 1; i < levels; i++)
    lines.push(
      `${indent}${prefix}${i}: &${prefix}${i} [${Array(width)
        .fill(`*${prefix}${i - 1}`)
        .join(', ')}]`,
    )
  return `${lines.join('\n')}\n`
}

function refusal(text: string): string {
  try {
    parseYaml(text, { file: 't.yaml' })
  } catch (err) {
    return (err as Error).message
  }
  return assert.fail('expected a refusal')
}

test('D7: the classic billion laughs (9 × 9 aliases, 387 million nodes in 500 bytes) is refused at the alias that passes the cap', () => {
  assert.equal(MAX_YAML_ALIAS_NODES, 100_000)
  const text = laughs(10, 9)
  assert.ok(text.length < 900)
  assert.equal(
    refusal(text),
    "t.yaml:6:10: aliases expand to more than 100000 nodes (edgeop's limit for one document; exponentially nested aliases?)",
  )
})

test('D7: an 840-byte kubeconfig whose repeated key holds two equal alias trees (22 s of duplicate-key checks before) is refused', () => {
  // Two chains of 3 × 16 aliases (96 in all): equal values, never the same object, so a deep
  // comparison walks 43 million nodes.
  const text = `${laughs(16, 3, 'a')}${laughs(16, 3, 'b')}k: *a15\nk: *b15\n`
  assert.ok(text.length < 1600)
  assert.match(refusal(text), /^t\.yaml:\d+:\d+: aliases expand to more than 100000 nodes/)
})

test('D7: an exec kubeconfig whose cluster extension expands to 2^49 nodes (serialised into KUBERNETES_EXEC_INFO for the plugin: over 120 s before) is refused at load', async () => {
  const chain = laughs(49, 2, 'x', '        ')
  const file = path.join(dir, 'exec-laughs.yaml')
  writeFileSync(
    file,
    `clusters:\n- name: c\n  cluster:\n    server: https://c.example.org\n    extensions:\n    - name: client.authentication.k8s.io/exec\n      extension:\n${chain}` +
      'users:\n- name: u\n  user:\n    exec: {command: /bin/true, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, provideClusterInfo: true}\n' +
      'contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n',
  )
  await assert.rejects(loadKubeconfig({ paths: [file] }), (e: { code: string; message: string }) => {
    assert.equal(e.code, 'EDGEOP_ERR_YAML')
    assert.match(e.message, /^\/.*exec-laughs\.yaml:\d+:\d+: aliases expand to more than 100000 nodes/)
    return true
  })
})

test('D7: aliases within the cap still resolve, and their nodes are counted once per use', () => {
  const doc = parseYaml(laughs(5, 9)) as Record<string, unknown[]>
  assert.equal((doc.l4 as unknown[][][][]).flat(4).length, 9 ** 5)
  // A repeated key with an equal value (an entry merged twice) is still accepted.
  assert.deepEqual(parseYaml('a: &a {x: [1, {z: 2}]}\nb: *a\nb: {x: [1, {z: 2}]}\n'), {
    a: { x: [1, { z: 2 }] },
    b: { x: [1, { z: 2 }] },
  })
})
