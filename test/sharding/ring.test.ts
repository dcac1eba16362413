/** The ring's pure parts: rendezvous ownership and membership judged on the local clock. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Lease } from '../../src/core/types.ts'
import { Membership, ownerOf } from '../../src/sharding/ring.ts'

const KEYS = Array.from({ length: 3000 }, (_, i) => `ns-${i % 7}/app-${i}`)
const owners = (members: string[]) => new Map(KEYS.map((k) => [k, ownerOf(k, members)]))

test('every key has exactly one owner among the members, the same whatever their order; none without members', () => {
  const a = owners(['a', 'b', 'c'])
  const b = owners(['c', 'a', 'b'])
  assert.deepEqual(a, b)
  for (const o of a.values()) assert.ok(o === 'a' || o === 'b' || o === 'c')
  assert.equal(ownerOf('ns/x', []), undefined)
})

test('keys split evenly: each of 3 members owns 30-37 % of 3,000', () => {
  const count = new Map<string, number>()
  for (const o of owners(['a', 'b', 'c']).values()) count.set(o!, (count.get(o!) ?? 0) + 1)
  for (const [m, n] of count) assert.ok(n > 900 && n < 1110, `${m}: ${n}`)
})

test('a member joining takes only keys for itself (~1/4); one leaving gives away only its own', () => {
  const three = owners(['a', 'b', 'c'])
  const four = owners(['a', 'b', 'c', 'd'])
  let moved = 0
  for (const k of KEYS)
    if (three.get(k) !== four.get(k)) {
      assert.equal(four.get(k), 'd', `${k} moved between old members`)
      moved++
    }
  assert.ok(moved > 600 && moved < 900, `moved ${moved}`)
  const two = owners(['a', 'c'])
  for (const k of KEYS)
    if (three.get(k) !== 'b') assert.equal(two.get(k), three.get(k), `${k} moved needlessly`)
})

const LABEL = 'shard.edgeop.io/ring'
const lease = (id: string, rv: string, holder = `h-${id}`, seconds = 15): Lease => ({
  metadata: { name: `ring-${id}`, resourceVersion: rv, labels: { [LABEL]: id } },
  spec: { holderIdentity: holder, leaseDurationSeconds: seconds },
})

test('a member is live while its Lease changes within its duration on the local clock; in the ring once seen renewing', () => {
  const m = new Membership(LABEL, 'a')
  // First seen counts as live, whatever its renewTime says; only self is in the ring yet.
  assert.deepEqual(m.observe([lease('b', '1'), lease('a', '1')], 1_000), [['a', 'b'], ['a']])
  assert.deepEqual(m.observe([lease('b', '2'), lease('a', '1')], 15_999), [
    ['a', 'b'],
    ['a', 'b'],
  ])
  // a unchanged for 15 s: expired; b renewed at 15.999 s.
  assert.deepEqual(m.observe([lease('b', '2'), lease('a', '1')], 16_000), [['b'], ['b']])
  // a renews again: live from now on.
  assert.deepEqual(m.observe([lease('b', '3'), lease('a', '2')], 20_000), [
    ['a', 'b'],
    ['a', 'b'],
  ])
  // b stops renewing: live (and in the ring) until 15 s after its last change was seen.
  assert.deepEqual(m.observe([lease('b', '3'), lease('a', '3')], 34_999), [
    ['a', 'b'],
    ['a', 'b'],
  ])
  assert.deepEqual(m.observe([lease('b', '3'), lease('a', '4')], 35_000), [['a'], ['a']])
})

test('a released or unlabelled Lease is no member; a Lease gone and back counts as new', () => {
  const m = new Membership(LABEL, 'a')
  const other: Lease = { metadata: { name: 'leader', resourceVersion: '1' }, spec: { holderIdentity: 'x' } }
  assert.deepEqual(m.observe([lease('a', '1', ''), other, lease('b', '1')], 0), [['b'], []])
  assert.deepEqual(m.observe([lease('b', '2')], 1_000), [['b'], ['b']])
  assert.deepEqual(m.observe([], 10_000), [[], []])
  assert.deepEqual(m.observe([lease('b', '2')], 20_000), [['b'], []], 'forgotten while absent, new again')
})
