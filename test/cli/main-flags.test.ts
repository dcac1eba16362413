/**
 * The binary's flag checks, through the binary itself: every bad value below is refused with one line
 * naming the flag and exit 2, before the process logs "starting" or touches a cluster.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, test } from 'node:test'

const MAIN = resolve(import.meta.dirname, '../../src/main.ts')
/** No cluster: a run that gets past flag checking stops at loading this file (exit 1, never 2). */
const NO_CLUSTER = '--kubeconfig=/nonexistent/kubeconfig'

interface Outcome {
  status: number
  stdout: string
  stderr: string
}
function edgeop(...args: string[]): Promise<Outcome> {
  return new Promise((done) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EDGEOP_')))
    execFile(process.execPath, [MAIN, ...args], { encoding: 'utf8', env }, (err, stdout, stderr) =>
      done({ status: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    )
  })
}

let dir = ''
before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-main-')))
  await writeFile(join(dir, 'a-file'), 'x')
})
after(() => rm(dir, { recursive: true, force: true }))

test('bad values exit 2 with one line naming the flag, before "starting"', async () => {
  const file = join(dir, 'a-file')
  const cases: [string[], string | RegExp][] = [
    [['--max-concurrent-reconciles=1e9'], '--max-concurrent-reconciles: must be at most 500, got "1e9"'],
    [['--burst=1e9'], '--burst: must be at most 10000, got "1e9"'],
    [['--qps=1e400'], '--qps: not a finite number, got "1e400"'],
    [['--namespace='], /^--namespace: must not be empty \(leave --namespace out to watch all namespaces\)/],
    [
      ['--leader-elect', '--leader-election-id=Bad_ID!'],
      /^--leader-election-id: expected a Lease name \(DNS-1123 subdomain: .*\), got "Bad_ID!"$/,
    ],
    [
      ['--leader-elect', '--leader-election-id=op', '--leader-election-namespace=Bad_ID!'],
      /^--leader-election-namespace: expected a namespace name \(DNS-1123 label: .*\), got "Bad_ID!"$/,
    ],
    [
      ['--leader-elect', '--leader-election-id=op', '--leader-election-lease-duration=600h'],
      '--leader-election-lease-duration: must be at most 1h0m0s, got "600h"',
    ],
    [['--shutdown-grace-period=600h'], '--shutdown-grace-period: must be at most 24h0m0s, got "600h"'],
    [
      ['--database-api=notaurl'],
      '--database-api: expected an absolute http:// or https:// URL, got "notaurl"',
    ],
    [
      ['--database-api=ftp://db'],
      '--database-api: expected an absolute http:// or https:// URL, got "ftp://db"',
    ],
    [['check', '--namespace=Bad_NS'], /^--namespace: expected a namespace name/],
    [['manifests', '--image='], '--image: must not be empty, got ""'],
    [['manifests', '--image=a b'], /^--image: expected an image reference/],
    [
      ['agent', '--node-name=Bad_Node'],
      /^--node-name: expected a node name \(DNS-1123 subdomain: .*\), got "Bad_Node"$/,
    ],
    [['agent'], '--node-name: required (set it from spec.nodeName with the downward API)'],
    [['agent', '--node-name=n1', '--root='], '--root: must not be empty, got ""'],
    [
      ['agent', '--node-name=n1', '--recheck-interval=600h'],
      '--recheck-interval: must be at most 24h0m0s, got "600h"',
    ],
    [
      ['agent', '--node-name=n1', '--root=/'],
      /^--root: "\/" is a system directory: .*\(--allow-system-root accepts it\)$/,
    ],
    [
      ['agent', '--node-name=n1', '--root=/etc/edgeop'],
      /^--root: "\/etc\/edgeop" is inside \/etc, a system directory/,
    ],
    [
      ['agent', '--node-name=n1', `--root=${file}`],
      `--root: ${JSON.stringify(file)} exists and is not a directory`,
    ],
    [
      ['agent', '--node-name=n1', '--root=/proc/self/fdinfo', '--allow-system-root'],
      /^--root: "\/proc\/self\/fdinfo" is not writable: /,
    ],
  ]
  const outcomes = await Promise.all(
    cases.map(([args]) => edgeop(...args, ...(args[0] === 'manifests' ? [] : [NO_CLUSTER]))),
  )
  cases.forEach(([args, expected], i) => {
    const { status, stdout, stderr } = outcomes[i]!
    const label = args.join(' ')
    assert.equal(status, 2, `${label}: ${stderr}`)
    assert.equal(stdout, '', label)
    assert.ok(stderr.startsWith('edgeop: ') && stderr.endsWith('\n'), label)
    assert.equal(stderr.split('\n').length, 2, `${label}: one line`)
    const line = stderr.slice('edgeop: '.length, -1)
    if (typeof expected === 'string') assert.equal(line, expected, label)
    else assert.match(line, expected, label)
  })
})

test('good values pass the checks: the run gets as far as the (missing) cluster', async () => {
  const root = join(dir, 'agent-root')
  const runs = await Promise.all([
    edgeop(
      '--qps=0',
      '--max-concurrent-reconciles=500',
      '--database-api=https://db.example.com:8443/v1',
      NO_CLUSTER,
    ),
    edgeop(
      '--leader-elect',
      '--leader-election-id=edgeop.example.com',
      '--leader-election-namespace=ops',
      NO_CLUSTER,
    ),
    edgeop('agent', '--node-name=node-1.example.com', `--root=${root}`, NO_CLUSTER),
    // /tmp itself is refused as a root unless explicitly allowed.
    edgeop('agent', '--node-name=n1', '--root=/tmp', '--allow-system-root', NO_CLUSTER),
  ])
  for (const r of runs) {
    // Exit 2 as for a refused flag, but the logger's start-up line: the flags passed.
    assert.equal(r.status, 2, r.stderr)
    assert.doesNotMatch(r.stderr, /^edgeop: /m)
    assert.match(r.stderr, /edgeop( agent)? cannot start: .*nonexistent\/kubeconfig/)
  }
  assert.deepEqual(await readdir(root), [], 'the agent root was created, and the write probe removed')
  const manifests = await edgeop('manifests', '--image=registry.example.com/edgeop:1.2.3')
  assert.equal(manifests.status, 0, manifests.stderr)
  assert.match(manifests.stdout, /image: registry\.example\.com\/edgeop:1\.2\.3/)
})

test('--help shows every numeric range and what 0 and -1 mean for --qps', async () => {
  const [run, agent] = await Promise.all([edgeop('--help'), edgeop('agent', '--help')])
  assert.equal(run.status, 0)
  for (const fragment of [
    '(default 1; range 1..500; env EDGEOP_MAX_CONCURRENT_RECONCILES)',
    "-1 disables the limit (controller-runtime's choice); 0 means the default, 5. (default 5; range -1, 0, or 0.01..10000; env EDGEOP_QPS)",
    '(default 10; range 1..10000; env EDGEOP_BURST)',
    '(default 15s; range 1s..1h0m0s; env EDGEOP_LEADER_ELECTION_LEASE_DURATION)',
    '(default 10s; range 1ms..1h0m0s; env EDGEOP_LEADER_ELECTION_RENEW_DEADLINE)',
    '(default 2s; range 1ms..1h0m0s; env EDGEOP_LEADER_ELECTION_RETRY_PERIOD)',
    '(default 30s; range at most 24h0m0s; env EDGEOP_SHUTDOWN_GRACE_PERIOD)',
    'Base URL (absolute http:// or https://)',
  ])
    assert.ok(run.stdout.includes(fragment), fragment)
  assert.equal(agent.status, 0)
  for (const fragment of [
    '(default 30s; range 1s..24h0m0s; env EDGEOP_RECHECK_INTERVAL)',
    '  --allow-system-root\n',
    '(default 1; range 1..500; env EDGEOP_MAX_CONCURRENT_RECONCILES)',
  ])
    assert.ok(agent.stdout.includes(fragment), fragment)
})
