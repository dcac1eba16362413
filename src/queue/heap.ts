/**
 * @module heap — a binary min-heap whose nodes know their position, so a key can be lowered in place.
 */

/**
 * Size below which a {@link MinHeap} never compacts its array: copying fewer than 64 pointers is not
 * worth it. Our choice.
 */
export const HEAP_COMPACT_MIN = 64

/**
 * A heap node: the heap writes the node's current index here (−1 once removed), which is what lets
 * {@link MinHeap.fix} and {@link MinHeap.remove} find it in O(1).
 *
 * @example
 * const node = { at: 10, heapIndex: -1 } satisfies HeapNode
 */
export interface HeapNode {
  heapIndex: number
}

/**
 * A binary min-heap ordered by `less`.
 *
 * Guarantees: `peek`/`pop` return a node `n` such that no other node `m` has `less(m, n)`; `push`,
 * `pop`, `fix` and `remove` are O(log n); every node in the heap has `heapIndex` equal to its
 * position, and a popped or removed node has `heapIndex === -1`; popped slots are released, and the
 * array is compacted once the heap has shrunk to a quarter of its peak (V8 does not trim an array's
 * backing store on `pop`, so a burst would otherwise keep its full-size array: kubernetes/kubernetes#105031's lesson).
 *
 * Does not guarantee: an order between nodes that are not `less` than each other (make `less` total,
 * e.g. with a sequence number, when ties must be deterministic); detection of a node pushed twice or
 * of a key changed without {@link MinHeap.fix}.
 *
 * @example
 * interface Timer extends HeapNode { at: number }
 * const heap = new MinHeap<Timer>((a, b) => a.at < b.at)
 * const t = { at: 30, heapIndex: -1 }
 * heap.push(t)
 * heap.push({ at: 20, heapIndex: -1 })
 * t.at = 10
 * heap.fix(t)
 * heap.pop() // t
 */
export class MinHeap<N extends HeapNode> {
  readonly #less: (a: N, b: N) => boolean
  /** Invariant: for every i > 0, !less(nodes[i], nodes[(i - 1) >> 1]) and nodes[i].heapIndex === i. */
  #nodes: N[] = []
  /** Largest size since #nodes was last allocated: a stand-in for its backing-store capacity. */
  #peak = 0

  constructor(less: (a: N, b: N) => boolean) {
    this.#less = less
  }

  /** Number of nodes. */
  get size(): number {
    return this.#nodes.length
  }

  /** The least node, or undefined when empty. */
  peek(): N | undefined {
    return this.#nodes[0]
  }

  /** Inserts `node`. */
  push(node: N): void {
    node.heapIndex = this.#nodes.length
    this.#nodes.push(node)
    if (this.#nodes.length > this.#peak) this.#peak = this.#nodes.length
    this.#up(node.heapIndex)
  }

  /** Removes and returns the least node, or undefined when empty. */
  pop(): N | undefined {
    const nodes = this.#nodes
    const top = nodes[0]
    if (top === undefined) return undefined
    const last = nodes.pop() as N
    if (last !== top) {
      nodes[0] = last
      last.heapIndex = 0
      this.#down(0)
    }
    top.heapIndex = -1
    this.#compact()
    return top
  }

  /** Restores the order after `node`'s key changed (either direction). `node` must be in this heap. */
  fix(node: N): void {
    if (!this.#up(node.heapIndex)) this.#down(node.heapIndex)
  }

  /** Removes `node` (which must be in this heap). */
  remove(node: N): void {
    const nodes = this.#nodes
    const i = node.heapIndex
    const last = nodes.pop() as N
    if (last !== node) {
      nodes[i] = last
      last.heapIndex = i
      this.fix(last)
    }
    node.heapIndex = -1
    this.#compact()
  }

  /** Removes every node and releases the backing array. */
  clear(): void {
    for (const n of this.#nodes) n.heapIndex = -1
    this.#nodes = []
    this.#peak = 0
  }

  /** Copies #nodes into a right-sized array once it is at most a quarter of its peak (amortised O(1)). */
  #compact(): void {
    if (this.#peak > HEAP_COMPACT_MIN && this.#nodes.length <= this.#peak >>> 2) {
      this.#nodes = this.#nodes.slice()
      this.#peak = this.#nodes.length
    }
  }

  /** Moves the node at `i` towards the root; true when it moved. */
  #up(i: number): boolean {
    const nodes = this.#nodes
    const node = nodes[i] as N
    const start = i
    while (i > 0) {
      const p = (i - 1) >> 1
      const parent = nodes[p] as N
      if (!this.#less(node, parent)) break
      nodes[i] = parent
      parent.heapIndex = i
      i = p
    }
    nodes[i] = node
    node.heapIndex = i
    return i !== start
  }

  /** Moves the node at `i` towards the leaves. */
  #down(i: number): void {
    const nodes = this.#nodes
    const n = nodes.length
    const node = nodes[i] as N
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      let c = l
      if (r < n && this.#less(nodes[r] as N, nodes[l] as N)) c = r
      const child = nodes[c] as N
      if (!this.#less(child, node)) break
      nodes[i] = child
      child.heapIndex = i
      i = c
    }
    nodes[i] = node
    node.heapIndex = i
  }
}
