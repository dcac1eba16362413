import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import * as z from 'zod/mini'
import { NODE_TIMER_MAX_MS } from '../../../src/cli/flags/duration.ts'
import {
  booleanFlag,
  durationFlag,
  enumFlag,
  envName,
  formatFlagsHelp,
  listFlag,
  numberFlag,
  parseFlags,
  stringFlag,
} from '../../../src/cli/flags/flags.ts'

const FLAGS = {
  name: stringFlag('A name.', { default: 'x' }),
  count: numberFlag('A count.', { default: 1, integer: true, min: 1, max: 100 }),
  ratio: numberFlag('A ratio.', { default: 0.5, min: -1, max: 1 }),
  verbose: booleanFlag('Talk more.'),
  wait: durationFlag('A wait.', { default: 15_000, min: 1, max: 3_600_000 }),
  mode: enumFlag('A mode.', ['fast', 'slow'], 'slow'),
  tag: listFlag('A tag; repeatable.', {
    schema: z.string().check(z.regex(/^[a-z]+$/, 'expected lowercase letters')),
  }),
  'dry-run': booleanFlag('Do nothing.', { default: true }),
}

const DEFAULTS = {
  name: 'x',
  count: 1,
  ratio: 0.5,
  verbose: false,
  wait: 15_000,
  mode: 'slow',
  tag: [] as string[],
  dryRun: true,
}

describe('parseFlags: accepted command lines', () => {
  const cases: [string, string[], Record<string, string>, Partial<typeof DEFAULTS>, string[]?][] = [
    ['nothing gives the defaults', [], {}, {}],
    ['--flag=value', ['--name=a', '--count=3'], {}, { name: 'a', count: 3 }],
    ['--flag value', ['--name', 'a', '--count', '3'], {}, { name: 'a', count: 3 }],
    [
      'a value may start with a dash',
      ['--ratio', '-0.5', '--name', '--odd'],
      {},
      { ratio: -0.5, name: '--odd' },
    ],
    ['--flag= sets the empty string', ['--name='], {}, { name: '' }],
    ['a value containing =', ['--name=a=b'], {}, { name: 'a=b' }],
    ['boolean alone is true', ['--verbose'], {}, { verbose: true }],
    ['boolean =false', ['--verbose=false', '--dry-run=false'], {}, { verbose: false, dryRun: false }],
    [
      'boolean Go spellings (1, t, F, TRUE)',
      ['--verbose=1', '--dry-run=F'],
      {},
      { verbose: true, dryRun: false },
    ],
    ['a boolean never takes the next word', ['--verbose', 'false'], {}, { verbose: true }, ['false']],
    ['the last scalar wins', ['--count=2', '--count=5'], {}, { count: 5 }],
    ['durations', ['--wait=1m30s'], {}, { wait: 90_000 }],
    ['enum', ['--mode', 'fast'], {}, { mode: 'fast' }],
    ['numbers in exponent form', ['--ratio=1e-3'], {}, { ratio: 0.001 }],
    ['repeatable flags collect', ['--tag=a', '--tag', 'b'], {}, { tag: ['a', 'b'] }],
    ['positional arguments are returned', ['one', '--count=2', 'two'], {}, { count: 2 }, ['one', 'two']],
    ['-- ends the flags', ['--count=2', '--', '--count=3', '-x'], {}, { count: 2 }, ['--count=3', '-x']],
    [
      'environment supplies defaults',
      [],
      { EDGEOP_COUNT: '4', EDGEOP_DRY_RUN: 'false', EDGEOP_WAIT: '2s' },
      { count: 4, dryRun: false, wait: 2_000 },
    ],
    ['a flag wins over its environment variable', ['--count=2'], { EDGEOP_COUNT: '4' }, { count: 2 }],
    [
      'a list from the environment is comma-separated',
      [],
      { EDGEOP_TAG: 'a, b,c' },
      { tag: ['a', 'b', 'c'] },
    ],
    [
      'the bounds themselves are accepted',
      ['--count=100', '--ratio=-1', '--wait=1h'],
      {},
      { count: 100, ratio: -1, wait: 3_600_000 },
    ],
    ['a list flag replaces the environment list', ['--tag=z'], { EDGEOP_TAG: 'a,b' }, { tag: ['z'] }],
    ['an empty variable counts as unset', [], { EDGEOP_COUNT: '' }, {}],
    ['other prefixes are ignored', [], { OTHER_COUNT: '9', COUNT: '9' }, {}],
  ]
  for (const [title, argv, env, expected, args = []] of cases) {
    test(title, () => {
      const r = parseFlags(FLAGS, argv, env)
      assert.deepEqual(r, { ok: true, values: { ...DEFAULTS, ...expected }, args })
    })
  }

  test('values are typed by flag name, camel-cased', () => {
    const r = parseFlags(FLAGS, ['--dry-run=false'])
    assert.ok(r.ok)
    const dryRun: boolean = r.values.dryRun
    const tags: string[] = r.values.tag
    const mode: 'fast' | 'slow' = r.values.mode
    assert.deepEqual([dryRun, tags, mode], [false, [], 'slow'])
  })

  test('defaults are copied, never shared between parses', () => {
    const a = parseFlags(FLAGS, [])
    assert.ok(a.ok)
    a.values.tag.push('mutated')
    const b = parseFlags(FLAGS, [])
    assert.ok(b.ok)
    assert.deepEqual(b.values.tag, [])
  })
})

describe('parseFlags: one-line errors naming the flag', () => {
  const cases: [string[], Record<string, string>, string][] = [
    [['--count=fast'], {}, '--count: expected a number, got "fast"'],
    [['--count', '1.5'], {}, '--count: expected an integer, got "1.5"'],
    [['--count=0'], {}, '--count: must be at least 1, got "0"'],
    [['--count='], {}, '--count: expected a number, got ""'],
    [['--ratio=0x10'], {}, '--ratio: expected a number, got "0x10"'],
    [['--ratio=Infinity'], {}, '--ratio: expected a number, got "Infinity"'],
    [['--ratio=1e400'], {}, '--ratio: not a finite number, got "1e400"'],
    [['--ratio=-1e400'], {}, '--ratio: not a finite number, got "-1e400"'],
    [['--ratio=1.5'], {}, '--ratio: must be at most 1, got "1.5"'],
    [['--ratio=-2'], {}, '--ratio: must be at least -1, got "-2"'],
    [['--count=1e9'], {}, '--count: must be at most 100, got "1e9"'],
    [['--wait=2h'], {}, '--wait: must be at most 1h0m0s, got "2h"'],
    [['--wait=600h'], {}, '--wait: must be at most 1h0m0s, got "600h"'],
    [['--wait=1ns'], {}, '--wait: must be at least 1ms, got "1ns"'],
    [['--tag=a', '--tag='], {}, '--tag: must not be empty, got ""'],
    [[], { EDGEOP_TAG: 'a,,b' }, '--tag (from EDGEOP_TAG): must not be empty, got ""'],
    [
      [`--name=${'x'.repeat(10_000)}`, `--count=${'9'.repeat(10_000)}x`],
      {},
      `--count: expected a number, got "${'9'.repeat(64)}"… (10001 characters)`,
    ],
    [[`--${'n'.repeat(1_000)}`], {}, `unknown flag --${'n'.repeat(64)}…`],
    [
      [],
      { EDGEOP_WAIT: `${'1'.repeat(100_000)}x` },
      `--wait (from EDGEOP_WAIT): expected a duration like 15s, 1m30s or 500ms, got "${'1'.repeat(64)}"… (100001 characters)`,
    ],
    [['--verbose=yes'], {}, '--verbose: expected true or false, got "yes"'],
    [['--wait=15'], {}, '--wait: expected a duration like 15s, 1m30s or 500ms, got "15"'],
    [['--wait=0s'], {}, '--wait: must be at least 1ms, got "0s"'],
    [['--mode=medium'], {}, '--mode: expected one of fast, slow, got "medium"'],
    [['--tag=a', '--tag=B'], {}, '--tag: expected lowercase letters, got "B"'],
    [['--nope'], {}, 'unknown flag --nope'],
    [['--nope=1'], {}, 'unknown flag --nope'],
    [['--toString'], {}, 'unknown flag --toString'],
    [['-v'], {}, 'unknown flag -v (flags start with --)'],
    [['--count'], {}, '--count: needs a value'],
    [[], { EDGEOP_COUNT: 'many' }, '--count (from EDGEOP_COUNT): expected a number, got "many"'],
    [[], { EDGEOP_TAG: 'ok,NOT' }, '--tag (from EDGEOP_TAG): expected lowercase letters, got "NOT"'],
    [['--name=a\nb', '--count=x\ny'], {}, '--count: expected a number, got "x\\ny"'],
  ]
  for (const [argv, env, error] of cases) {
    test(`${JSON.stringify(argv).slice(0, 80)} ${JSON.stringify(env)} → ${error.slice(0, 100)}`, () => {
      const r = parseFlags(FLAGS, argv, env)
      assert.deepEqual(r, { ok: false, error })
      assert.ok(!error.includes('\n'), 'one line')
    })
  }

  test('a custom prefix reads other variables', () => {
    assert.deepEqual(
      parseFlags({ x: stringFlag('x') }, [], { NODE_AGENT_X: 'v', EDGEOP_X: 'w' }, 'NODE_AGENT_'),
      {
        ok: true,
        values: { x: 'v' },
        args: [],
      },
    )
    assert.equal(envName('leader-election-id'), 'EDGEOP_LEADER_ELECTION_ID')
  })
})

describe('declarations', () => {
  test('a default outside its range, or a duration beyond the Node timer limit, is a programming error', () => {
    assert.throws(() => numberFlag('x', { default: 0, min: 1, max: 2 }), RangeError)
    assert.throws(() => numberFlag('x', { default: 1, min: 1, max: Infinity }), RangeError)
    assert.throws(() => durationFlag('x', { default: 1, max: NODE_TIMER_MAX_MS + 1 }), RangeError)
    assert.throws(() => durationFlag('x', { default: 2_000, min: 1, max: 1_000 }), RangeError)
    assert.doesNotThrow(() => durationFlag('x', { default: 1, max: NODE_TIMER_MAX_MS }))
  })

  test('a duration flag shows "at most" when it has no minimum; numbers may replace the range text', () => {
    const text = formatFlagsHelp({
      grace: durationFlag('Grace.', { default: 0, max: 60_000 }),
      rate: numberFlag('Rate.', {
        default: 0,
        min: -1,
        max: 10,
        also: { test: (n) => n === -1 || n >= 0, message: 'expected -1 or 0..10' },
        rangeText: '-1, or 0..10',
      }),
    })
    assert.match(text, /Grace\. \(default 0s; range at most 1m0s; env EDGEOP_GRACE\)/)
    assert.match(text, /Rate\. \(default 0; range -1, or 0\.\.10; env EDGEOP_RATE\)/)
    const rate = {
      rate: numberFlag('Rate.', {
        default: 0,
        min: -1,
        max: 10,
        also: { test: (n) => n === -1 || n >= 0, message: 'expected -1 or 0..10' },
      }),
    }
    assert.deepEqual(parseFlags(rate, ['--rate=-0.5']), {
      ok: false,
      error: '--rate: expected -1 or 0..10, got "-0.5"',
    })
    assert.equal(parseFlags(rate, ['--rate=-1']).ok, true)
  })
})

describe('help', () => {
  test('every flag with placeholder, description, default and environment variable', () => {
    assert.equal(
      formatFlagsHelp({
        wait: FLAGS.wait,
        tag: FLAGS.tag,
        verbose: FLAGS.verbose,
        name: FLAGS.name,
        mode: FLAGS.mode,
      }),
      [
        '  --wait duration',
        '        A wait. (default 15s; range 1ms..1h0m0s; env EDGEOP_WAIT)',
        '  --tag string (repeatable)',
        '        A tag; repeatable. (default []; env EDGEOP_TAG)',
        '  --verbose',
        '        Talk more. (default false; env EDGEOP_VERBOSE)',
        '  --name string',
        '        A name. (default "x"; env EDGEOP_NAME)',
        '  --mode fast|slow',
        '        A mode. (default "slow"; env EDGEOP_MODE)',
      ].join('\n'),
    )
  })
})
