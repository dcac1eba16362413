/**
 * The AppService operator's own check across flags: sharding covers the home cluster only, so
 * `--shard` with `--clusters-file` is refused at start (each replica would reconcile every member).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseFlags } from '../../../src/cli/flags/flags.ts'
import { APPSERVICE_FLAGS, appServiceOperator } from '../../../src/operators/appservice/operator.ts'

function check(argv: string[]): string | undefined {
  const r = parseFlags(APPSERVICE_FLAGS, argv, {})
  assert.ok(r.ok, JSON.stringify(r))
  return appServiceOperator.validate!(r.values)
}

test('--shard with --clusters-file is refused; each alone is accepted', () => {
  assert.equal(
    check(['--shard', '--leader-election-id=app', '--clusters-file=/etc/edgeop/clusters']),
    '--clusters-file: not supported with --shard yet',
  )
  assert.equal(check(['--shard', '--leader-election-id=app']), undefined)
  assert.equal(check(['--leader-elect', '--leader-election-id=app', '--clusters-file=/c']), undefined)
  assert.equal(check(['--shard']), '--leader-election-id: required with --shard')
})
