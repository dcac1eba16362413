import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type HeapNode, MinHeap } from '../../src/queue/heap.ts'
import { seededRandom } from '../support/random.ts'
import { SUITE } from './support.ts'

interface Node extends HeapNode {
  key: number
  id: number
}

const less = (a: Node, b: Node): boolean => a.key < b.key || (a.key === b.key && a.id < b.id)
const byKey = (a: Node, b: Node): number => a.key - b.key || a.id - b.id

describe('min-heap', SUITE, () => {
  test('pops in order after random pushes, fixes (both directions) and removes', () => {
    for (const seed of [1, 2, 3]) {
      const rand = seededRandom(seed)
      const heap = new MinHeap<Node>(less)
      const live: Node[] = []
      const least = (): Node | undefined =>
        live.reduce<Node | undefined>((m, n) => (m && !less(n, m) ? m : n), undefined)
      const takeRandom = (): Node => {
        const i = Math.floor(rand() * live.length)
        const n = live[i] as Node
        live[i] = live[live.length - 1] as Node
        live.pop()
        return n
      }
      let id = 0
      for (let step = 0; step < 5000; step++) {
        const r = rand()
        if (r < 0.5 || live.length === 0) {
          const n = { key: Math.floor(rand() * 1000), id: id++, heapIndex: -1 }
          heap.push(n)
          live.push(n)
        } else if (r < 0.7) {
          const n = live[Math.floor(rand() * live.length)] as Node
          n.key = Math.floor(rand() * 1000)
          heap.fix(n)
        } else if (r < 0.8) {
          const n = takeRandom()
          heap.remove(n)
          assert.equal(n.heapIndex, -1)
        } else {
          const expected = least()
          const got = heap.pop()
          assert.equal(got, expected)
          assert.equal(got?.heapIndex, -1)
          live.splice(live.indexOf(got as Node), 1)
        }
        assert.equal(heap.size, live.length)
        assert.equal(heap.peek(), least())
      }
      const rest: Node[] = []
      for (let n = heap.pop(); n !== undefined; n = heap.pop()) rest.push(n)
      assert.deepEqual(rest, live.sort(byKey))
    }
  })

  test('an empty heap peeks and pops undefined', () => {
    const heap = new MinHeap<Node>(less)
    assert.equal(heap.peek(), undefined)
    assert.equal(heap.pop(), undefined)
  })

  test('clear drops every node and marks it removed', () => {
    const heap = new MinHeap<Node>(less)
    const nodes = [3, 1, 2].map((key, id) => ({ key, id, heapIndex: -1 }))
    for (const n of nodes) heap.push(n)
    heap.clear()
    assert.equal(heap.size, 0)
    assert.ok(nodes.every((n) => n.heapIndex === -1))
  })
})
