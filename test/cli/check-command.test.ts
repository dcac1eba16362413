import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type CheckClient, checkCommand } from '../../src/cli/check-command.ts'
import type { OperatorOptions } from '../../src/cli/flags/operator-flags.ts'
import { type CliSpec, runCli } from '../../src/cli/run-cli.ts'
import type { RequestSpec } from '../../src/transport/transport.ts'

/** A client for which every review answers `allowed(verb, resource)`. */
function fakeClient(allowed: (attrs: Record<string, string>) => boolean) {
  const reviews: Record<string, string>[] = []
  let closed = 0
  const client: CheckClient = {
    defaultNamespace: 'ctx-ns',
    async request<T>(spec: RequestSpec): Promise<T> {
      if (spec.path === '/version') return { gitVersion: 'v1.37.2' } as T
      if (spec.path.endsWith('/selfsubjectreviews')) return { status: { userInfo: { username: 'op' } } } as T
      const attrs = (spec.body as { spec: { resourceAttributes: Record<string, string> } }).spec
        .resourceAttributes
      reviews.push(attrs)
      return { status: { allowed: allowed(attrs) } } as T
    },
    mapper: { mapping: async () => ({}) },
    async close() {
      closed++
    },
  }
  return { client, reviews, closed: () => closed }
}

async function run(argv: string[], allowed: (a: Record<string, string>) => boolean) {
  const fake = fakeClient(allowed)
  let out = ''
  let seen: OperatorOptions | undefined
  const exits: number[] = []
  const spec: CliSpec = {
    name: 'op',
    commands: {
      check: checkCommand({
        sharding: true,
        requirements: (o) => ({
          permissions: o.namespace.map((namespace) => ({
            group: '',
            resource: 'configmaps',
            verbs: ['list'],
            namespace,
          })),
        }),
        stdout: { write: (s) => (out += s) },
        connect: async (o) => {
          seen = o
          return fake.client
        },
      }),
    },
  }
  await runCli(spec, {
    argv: ['check', ...argv],
    env: {},
    exit: (c) => exits.push(c),
    stderr: { write: () => {} },
  })
  return { out, exits, reviews: fake.reviews, closed: fake.closed(), seen }
}

describe('check command', () => {
  test('checks what the flags imply, prints the report and exits 0 when all is granted', async () => {
    const r = await run(['--namespace=a', '--namespace=b', '--qps=7'], () => true)
    assert.deepEqual(r.exits, [0])
    assert.equal(r.seen?.qps, 7, 'connect receives the parsed flags')
    assert.deepEqual(
      r.reviews.map((a) => a.namespace),
      ['a', 'b'],
    )
    assert.equal(r.closed, 1)
    assert.match(r.out, /^\[\+\]cluster reachable \(v1\.37\.2\)\n\[\+\]authenticated as op\n/)
  })

  test('with --leader-elect the Lease verbs are checked too; missing ones exit 1 with the rule to add', async () => {
    const r = await run(
      ['--leader-elect', '--leader-election-id=op'],
      (a) => a.resource !== 'leases' || a.verb === 'get',
    )
    assert.deepEqual(r.exits, [1])
    assert.deepEqual(
      r.reviews.map((a) => `${a.verb} ${a.resource} ${a.namespace}`),
      ['get leases ctx-ns', 'create leases ctx-ns', 'update leases ctx-ns'],
    )
    assert.ok(
      r.out.endsWith(
        'Role in namespace "ctx-ns":\n- apiGroups: ["coordination.k8s.io"]\n  resources: ["leases"]\n  verbs: ["create", "update"]\n',
      ),
      r.out,
    )
    const explicit = await run(
      ['--leader-elect', '--leader-election-id=op', '--leader-election-namespace=ops'],
      () => true,
    )
    assert.ok(explicit.reviews.every((a) => a.namespace === 'ops'))
  })

  test('with --shard the Lease verbs and list (the membership) are checked', async () => {
    const r = await run(
      ['--shard', '--leader-election-id=op'],
      (a) => a.resource !== 'leases' || a.verb !== 'list',
    )
    assert.deepEqual(r.exits, [1])
    assert.deepEqual(
      r.reviews.map((a) => `${a.verb} ${a.resource} ${a.namespace}`),
      ['get leases ctx-ns', 'create leases ctx-ns', 'update leases ctx-ns', 'list leases ctx-ns'],
    )
    assert.ok(r.out.endsWith('  verbs: ["list"]\n'), r.out)
  })

  test('invalid flags stop before connecting', async () => {
    const r = await run(['--leader-elect'], () => true)
    assert.deepEqual([r.exits, r.seen, r.closed], [[2], undefined, 0])
  })
})
