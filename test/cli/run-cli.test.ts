import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { numberFlag, stringFlag } from '../../src/cli/flags/flags.ts'
import { OPERATOR_FLAGS, validateOperatorOptions } from '../../src/cli/flags/operator-flags.ts'
import { type CliSpec, defineCommand, parseCommandLine, runCli } from '../../src/cli/run-cli.ts'

const ran: unknown[] = []
const run = defineCommand({
  description: 'Run the operator',
  flags: OPERATOR_FLAGS,
  validate: validateOperatorOptions,
  run(values) {
    ran.push(['run', values.qps, values.namespace])
    return values.qps === 13 ? 3 : undefined
  },
})
const check = defineCommand({
  description: 'Check the cluster and RBAC',
  flags: {
    kubeconfig: OPERATOR_FLAGS.kubeconfig,
    timeout: numberFlag('Seconds.', { default: 5, min: 0, max: 60 }),
  },
  async run(values) {
    if (values.kubeconfig === 'boom') throw new Error('cannot read /boom:\nENOENT')
    ran.push(['check', values.timeout])
    return 1
  },
})
const echo = defineCommand({
  description: 'Echo',
  flags: { sep: stringFlag('Separator.', { default: ' ' }) },
  args: true,
  run: (values, args) => {
    ran.push(args.join(values.sep))
    return 0
  },
})
const guarded = defineCommand({
  description: 'Refuses a directory it cannot use',
  flags: { dir: stringFlag('A directory.', { default: 'ok' }) },
  async precheck(values) {
    ran.push(['precheck', values.dir])
    return values.dir === 'bad' ? '--dir: "bad" is not writable' : undefined
  },
  run(values) {
    ran.push(['guarded', values.dir])
    return 0
  },
})
const SPEC: CliSpec = {
  name: 'edgeop',
  description: 'An operator.',
  defaultCommand: 'run',
  commands: { run, check, echo, guarded },
}

describe('parseCommandLine', () => {
  const cases: [string, string[], Record<string, string>, object][] = [
    ['no command runs the default', ['--qps=2'], {}, { kind: 'run', command: 'run', args: [] }],
    [
      'a named command',
      ['check', '--timeout=9'],
      {},
      { kind: 'run', command: 'check', values: { kubeconfig: '', timeout: 9 }, args: [] },
    ],
    [
      'positional arguments where allowed',
      ['echo', 'a', '--sep=-', 'b'],
      {},
      { kind: 'run', command: 'echo', values: { sep: '-' }, args: ['a', 'b'] },
    ],
    [
      'environment for the named command',
      ['check'],
      { EDGEOP_TIMEOUT: '1' },
      { kind: 'run', command: 'check', values: { kubeconfig: '', timeout: 1 } },
    ],
    [
      'unknown command',
      ['deploy'],
      {},
      { kind: 'error', message: 'unknown command "deploy" (commands: run, check, echo, guarded)' },
    ],
    [
      'unexpected positional argument',
      ['run', 'extra'],
      {},
      { kind: 'error', message: 'unexpected argument "extra"' },
    ],
    ['a flag of another command', ['check', '--qps=1'], {}, { kind: 'error', message: 'unknown flag --qps' }],
    ['flag error', ['--qps', 'fast'], {}, { kind: 'error', message: '--qps: expected a number, got "fast"' }],
    [
      'cross-flag validation',
      ['--leader-elect'],
      {},
      { kind: 'error', message: '--leader-election-id: required with --leader-elect' },
    ],
    ['--help wins over bad flags', ['--qps=fast', '--help'], {}, { kind: 'help' }],
    ['-h', ['check', '-h'], {}, { kind: 'help' }],
    ['help command', ['help'], {}, { kind: 'help' }],
    ['--help after -- is an argument', ['echo', '--', '--help'], {}, { kind: 'run', args: ['--help'] }],
  ]
  for (const [title, argv, env, expected] of cases) {
    test(title, () => {
      const action = parseCommandLine(SPEC, argv, env)
      for (const [k, v] of Object.entries(expected)) {
        if (k === 'values') {
          assert.ok(action.kind === 'run')
          assert.deepEqual(action.values, v)
        } else assert.deepEqual((action as Record<string, unknown>)[k], v, k)
      }
    })
  }

  test('top-level help lists commands and the default command flags; command help its own flags', () => {
    const top = parseCommandLine(SPEC, ['--help'], {})
    assert.ok(top.kind === 'help')
    assert.ok(
      top.text.startsWith(
        [
          'Usage: edgeop [command] [flags]',
          '',
          'An operator.',
          '',
          'Commands:',
          '  run      Run the operator (default)',
          '  check    Check the cluster and RBAC',
          '  echo     Echo',
          '  guarded  Refuses a directory it cannot use',
          '',
          'Flags (run):',
          '  --kubeconfig path',
        ].join('\n'),
      ),
      top.text,
    )
    assert.match(
      top.text,
      /--shutdown-grace-period duration\n.*\(default 30s; range at most 24h0m0s; env EDGEOP_SHUTDOWN_GRACE_PERIOD\)\n {2}--cache-dir dir\n.*\(default ""; env EDGEOP_CACHE_DIR\)\n {2}--tracing off\|otlp\n.*\(default "off"; env EDGEOP_TRACING\)\n$/,
    )
    const sub = parseCommandLine(SPEC, ['check', '--help'], {})
    assert.ok(sub.kind === 'help')
    assert.equal(
      sub.text,
      [
        'Usage: edgeop check [flags]',
        '',
        'Check the cluster and RBAC',
        '',
        'Flags:',
        '  --kubeconfig path',
        '        Path to a kubeconfig file. Unset: $KUBECONFIG, then in-cluster, then ~/.kube/config. (default ""; env EDGEOP_KUBECONFIG)',
        '  --timeout number',
        '        Seconds. (default 5; range 0..60; env EDGEOP_TIMEOUT)',
        '',
      ].join('\n'),
    )
  })

  test('without a default command, no command shows help', () => {
    assert.equal(parseCommandLine({ ...SPEC, defaultCommand: undefined }, [], {}).kind, 'help')
  })
})

describe('runCli: the process glue', () => {
  async function cli(argv: string[], env: Record<string, string> = {}) {
    let stdout = ''
    let stderr = ''
    const exits: number[] = []
    ran.length = 0
    await runCli(SPEC, {
      argv,
      env,
      stdout: { write: (s) => (stdout += s) },
      stderr: { write: (s) => (stderr += s) },
      exit: (c) => exits.push(c),
    })
    return { stdout, stderr, exits, ran: [...ran] }
  }

  test('an invalid value prints one line and exits 2 without running anything', async () => {
    assert.deepEqual(await cli(['--qps=fast']), {
      stdout: '',
      stderr: 'edgeop: --qps: expected a number, got "fast"\n',
      exits: [2],
      ran: [],
    })
  })

  test('help goes to stdout and exits 0', async () => {
    const r = await cli(['check', '--help'])
    assert.deepEqual([r.stderr, r.exits, r.ran], ['', [0], []])
    assert.match(r.stdout, /^Usage: edgeop check \[flags\]/)
  })

  test('the command runs with parsed values; its result is the exit code', async () => {
    assert.deepEqual(await cli(['--namespace=a'], { EDGEOP_QPS: '2' }), {
      stdout: '',
      stderr: '',
      exits: [0],
      ran: [['run', 2, ['a']]],
    })
    assert.deepEqual((await cli(['--qps=13'])).exits, [3])
    assert.deepEqual((await cli(['check'])).exits, [1])
  })

  test('a precheck refusal prints one line and exits 2 before the command runs', async () => {
    assert.deepEqual(await cli(['guarded', '--dir=bad']), {
      stdout: '',
      stderr: 'edgeop: --dir: "bad" is not writable\n',
      exits: [2],
      ran: [['precheck', 'bad']],
    })
    assert.deepEqual((await cli(['guarded'])).ran, [
      ['precheck', 'ok'],
      ['guarded', 'ok'],
    ])
  })

  test('a long unknown command or argument is not echoed whole', async () => {
    const r = await cli([`x${'y'.repeat(5_000)}`])
    assert.equal(r.exits[0], 2)
    assert.ok(r.stderr.length < 300, r.stderr.slice(0, 300))
  })

  test('a command that throws prints one line and exits 1', async () => {
    assert.deepEqual(await cli(['check', '--kubeconfig=boom']), {
      stdout: '',
      stderr: 'edgeop: cannot read /boom: ENOENT\n',
      exits: [1],
      ran: [],
    })
  })
})

describe('runCli in a real process', () => {
  test('an invalid flag prints one line on stderr and exits 2; --help exits 0', async (t) => {
    const { spawnSync } = await import('node:child_process')
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const url = (p: string) => JSON.stringify(new URL(p, import.meta.url).href)
    const script = `
      import { runCli } from ${url('../../src/cli/run-cli.ts')}
      import { OPERATOR_FLAGS } from ${url('../../src/cli/flags/operator-flags.ts')}
      await runCli({ name: 'edgeop', defaultCommand: 'run', commands: { run: { description: 'Run', flags: OPERATOR_FLAGS, run: () => 0 } } })`
    const dir = mkdtempSync(join(tmpdir(), 'edgeop-cli-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'main.mjs')
    writeFileSync(file, script)
    const node = (env: Record<string, string>, ...args: string[]) =>
      spawnSync(process.execPath, [file, ...args], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      })
    const bad = node({}, '--qps', 'fast')
    assert.deepEqual(
      [bad.status, bad.stdout, bad.stderr],
      [2, '', 'edgeop: --qps: expected a number, got "fast"\n'],
    )
    const badEnv = node({ EDGEOP_MAX_CONCURRENT_RECONCILES: '0' })
    assert.deepEqual(
      [badEnv.status, badEnv.stderr],
      [
        2,
        'edgeop: --max-concurrent-reconciles (from EDGEOP_MAX_CONCURRENT_RECONCILES): must be at least 1, got "0"\n',
      ],
    )
    assert.equal(node({ EDGEOP_QPS: '2' }).status, 0)
    const help = node({}, '--help')
    assert.equal(help.status, 0)
    assert.match(help.stdout, /^Usage: edgeop \[command\] \[flags\]\n/)
  })
})
