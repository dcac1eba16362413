import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { formatDuration, parseDuration } from '../../../src/cli/flags/duration.ts'

describe('parseDuration (Go time.ParseDuration)', () => {
  const cases: [string, number | undefined][] = [
    ['15s', 15_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['1h2m3.5s', 3_723_500],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['1.s', 1_000],
    ['250us', 0.25],
    ['250µs', 0.25],
    ['1000000ns', 1],
    ['0', 0],
    ['-1s', -1_000],
    ['+2s', 2_000],
    ['0s', 0],
    ['', undefined],
    ['15', undefined],
    ['1d', undefined],
    ['s', undefined],
    ['1m30', undefined],
    ['1 s', undefined],
    ['- 1s', undefined],
    ['fast', undefined],
  ]
  for (const [text, expected] of cases) {
    test(`${JSON.stringify(text)} → ${expected ?? 'invalid'}`, () => {
      assert.equal(parseDuration(text), expected)
    })
  }
})

describe('formatDuration (Go Duration.String)', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [500, '500ms'],
    [15_000, '15s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [1_500, '1.5s'],
    [-2_000, '-2s'],
  ]
  for (const [ms, text] of cases) {
    test(`${ms} → ${text}`, () => {
      assert.equal(formatDuration(ms), text)
      assert.equal(parseDuration(text), ms, 'round-trips')
    })
  }
})
