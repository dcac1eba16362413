import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import { type OwnershipRecord, sha256 } from '../../../src/operators/nodeconfig/file-store.ts'
import { planNode, selects, validateConfig } from '../../../src/operators/nodeconfig/plan.ts'

function nc(
  name: string,
  files: { path: string; content?: string; mode?: string }[],
  nodeSelector?: Record<string, string>,
  extra: Partial<NodeConfig['metadata']> = {},
): NodeConfig {
  return {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name, uid: `uid-${name}`, generation: 1, ...extra },
    spec: {
      ...(nodeSelector ? { nodeSelector } : {}),
      files: files.map((f) => ({ path: f.path, content: f.content ?? name, mode: f.mode ?? '0644' })),
    },
  }
}
const owned = (uid: string, name = uid) => ({ uid, name, sha256: sha256('x'), mode: '0644' })
const record = (files: OwnershipRecord['files'] = {}): OwnershipRecord => ({ version: 1, files })
const labels = { role: 'edge', zone: 'a' }

test('selectors: every label must match; an empty or absent selector selects every node', () => {
  assert.equal(selects({ role: 'edge' }, labels), true)
  assert.equal(selects({ role: 'edge', zone: 'b' }, labels), false)
  assert.equal(selects({ gpu: 'true' }, labels), false)
  assert.equal(selects({}, labels), true)
  assert.equal(selects(undefined, undefined), true)
  assert.equal(selects({ role: 'edge' }, undefined), false)
})

test('only selected NodeConfigs that are not being deleted apply, in name order', () => {
  const plan = planNode(
    [
      nc('b', [{ path: 'b' }], { role: 'edge' }),
      nc('a', [{ path: 'a' }]),
      nc('other', [{ path: 'o' }], { role: 'core' }),
      nc('going', [{ path: 'g' }], {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    ],
    labels,
    record(),
  )
  assert.deepEqual(
    plan.configs.map((p) => [p.config.metadata.name, p.files.map((f) => f.path), p.problems]),
    [
      ['a', ['a'], []],
      ['b', ['b'], []],
    ],
  )
  assert.equal(plan.configs[0]!.files[0]!.sha256, sha256('a'))
  assert.equal(plan.configs[0]!.files[0]!.mode, 0o644)
})

test('validation blocks the whole NodeConfig and names each reason', () => {
  const big = '€'.repeat(90_000) // 270,000 bytes: under the CRD's character cap, over the byte cap
  const v = validateConfig(
    nc('bad', [
      { path: 'ok.conf' },
      { path: '../escape' },
      { path: '.edgeop/owners.json' },
      { path: 'big', content: big },
      { path: 'setuid', mode: '4755' },
      { path: 'unreadable', mode: '0200' },
    ]),
  )
  assert.deepEqual(v.files, [])
  assert.deepEqual(v.problems, [
    '"../escape": ".." segments are not allowed',
    '".edgeop/owners.json": segments starting with ".edgeop" are reserved',
    '"big": content is 270000 bytes, over the 262144-byte cap',
    '"setuid": mode "4755" is not octal permission bits such as "0644"',
    '"unreadable": mode 0200 must let the owner read the file (0400)',
  ])
  assert.deepEqual(
    validateConfig({ ...nc('x', []), spec: { files: 'nope' } } as unknown as NodeConfig).problems,
    ['spec.files must be a list'],
  )
})

test('a path claimed by two NodeConfigs blocks both, each naming the other; the file keeps its recorded owner', () => {
  const plan = planNode(
    [nc('first', [{ path: 'shared.conf' }, { path: 'first-only' }]), nc('second', [{ path: 'shared.conf' }])],
    labels,
    record({ 'shared.conf': owned('uid-first', 'first'), 'first-only': owned('uid-first', 'first') }),
  )
  const [first, second] = plan.configs
  assert.deepEqual(first!.problems, ['"shared.conf" is also claimed by NodeConfig "second"'])
  assert.deepEqual(second!.problems, ['"shared.conf" is also claimed by NodeConfig "first"'])
  assert.deepEqual([first!.files, second!.files], [[], []], 'nothing written by either')
  assert.deepEqual(plan.removals, [], 'blocked owners keep their files')
})

test('a file that another claimed path needs as a directory is a conflict too', () => {
  const plan = planNode(
    [nc('file', [{ path: 'etc/app' }]), nc('dir', [{ path: 'etc/app/x.conf' }])],
    labels,
    record(),
  )
  assert.deepEqual(
    plan.configs.map((p) => [p.config.metadata.name, p.problems]),
    [
      ['dir', ['"etc/app/x.conf" needs "etc/app", a file of NodeConfig "file"']],
      ['file', ['"etc/app" is a directory of "etc/app/x.conf" claimed by NodeConfig "dir"']],
    ],
  )
  const self = planNode([nc('self', [{ path: 'a' }, { path: 'a/b' }])], labels, record())
  assert.deepEqual(self.configs[0]!.problems, ['"a" is a directory of "a/b" claimed by the same NodeConfig'])
})

test('garbage collection from the record: files of vanished, unselected and shrunk owners go; claimed ones stay', () => {
  const rec = record({
    'deleted.conf': owned('uid-deleted'),
    'relabelled.conf': owned('uid-core'),
    'dropped.conf': owned('uid-keep'),
    'kept.conf': owned('uid-keep'),
    'moved.conf': owned('uid-old-owner'),
    'recreated.conf': owned('uid-recreated-before'),
  })
  const plan = planNode(
    [
      nc('core', [{ path: 'relabelled.conf' }], { role: 'core' }),
      nc('keep', [{ path: 'kept.conf' }]),
      nc('new-owner', [{ path: 'moved.conf' }]),
      // Same name, new UID: the old object's file is not this one's.
      {
        ...nc('recreated', [{ path: 'other.conf' }]),
        metadata: { name: 'recreated', uid: 'uid-recreated-after' },
      },
    ],
    labels,
    rec,
  )
  assert.deepEqual(plan.removals.map((r) => r.path).sort(), [
    'deleted.conf',
    'dropped.conf',
    'recreated.conf',
    'relabelled.conf',
  ])
  assert.ok(
    !plan.removals.some((r) => r.path === 'moved.conf'),
    'overwritten by its new owner, not removed first',
  )
})

test('an invalid owner that still lists a path keeps the file it wrote before', () => {
  const plan = planNode(
    [nc('owner', [{ path: 'a.conf' }, { path: 'b.conf', mode: '0200' }])],
    labels,
    record({ 'a.conf': owned('uid-owner') }),
  )
  assert.equal(plan.configs[0]!.problems.length, 1)
  assert.deepEqual(plan.removals, [])
})
