import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { RING_BUFFER_MIN_CAPACITY, RingBuffer } from '../../src/queue/ring-buffer.ts'
import { seededRandom } from '../support/random.ts'
import { SUITE } from './support.ts'

describe('ring buffer', SUITE, () => {
  test('shifts items in push order across wrap-around and growth', () => {
    const fifo = new RingBuffer<number>()
    const model: number[] = []
    const rand = seededRandom(7)
    let next = 0
    for (let step = 0; step < 20_000; step++) {
      if (rand() < 0.55) {
        fifo.push(next)
        model.push(next++)
      } else {
        assert.equal(fifo.shift(), model.shift())
      }
      assert.equal(fifo.length, model.length)
      assert.equal(fifo.peek(), model[0])
    }
    assert.deepEqual(fifo.toArray(), model)
  })

  test('an empty buffer shifts and peeks undefined', () => {
    const fifo = new RingBuffer<string>()
    assert.equal(fifo.shift(), undefined)
    assert.equal(fifo.peek(), undefined)
    assert.equal(fifo.length, 0)
  })

  test('doubles when full and halves when at most a quarter full, never below the minimum', () => {
    const fifo = new RingBuffer<number>()
    assert.equal(fifo.capacity, RING_BUFFER_MIN_CAPACITY)
    for (let i = 0; i < 1000; i++) fifo.push(i)
    assert.equal(fifo.capacity, 1024)
    while (fifo.length > 257) fifo.shift()
    assert.equal(fifo.capacity, 1024)
    fifo.shift()
    assert.equal(fifo.capacity, 512, 'halved at a quarter')
    while (fifo.length > 0) fifo.shift()
    assert.equal(fifo.capacity, RING_BUFFER_MIN_CAPACITY)
    for (let i = 0; i < 1_000_000; i++) fifo.push(i)
    while (fifo.length > 0) fifo.shift()
    assert.equal(fifo.capacity, RING_BUFFER_MIN_CAPACITY, 'a burst leaves no large backing array')
  })

  test('push-shift alternation at a resize boundary does not resize again and again', () => {
    for (const size of [64, 33]) {
      const fifo = new RingBuffer<number>()
      for (let i = 0; i < 128; i++) fifo.push(i)
      while (fifo.length > size) fifo.shift()
      const cycle = (i: number): void => {
        fifo.push(i)
        fifo.shift()
        fifo.shift()
        fifo.push(i)
      }
      cycle(-1) // may resize once
      const cap = fifo.capacity
      for (let i = 0; i < 1000; i++) {
        cycle(i)
        assert.equal(fifo.capacity, cap, `size ${size}`)
      }
    }
  })

  test('clear empties and returns to the minimum capacity', () => {
    const fifo = new RingBuffer<number>()
    for (let i = 0; i < 100; i++) fifo.push(i)
    fifo.clear()
    assert.equal(fifo.length, 0)
    assert.equal(fifo.capacity, RING_BUFFER_MIN_CAPACITY)
    fifo.push(1)
    assert.equal(fifo.shift(), 1)
  })
})
