/**
 * The test apiserver's command line: an extra flag replaces ours of the same name, so that a list
 * flag (`--disable-admission-plugins`) can be cleared rather than appended to.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { apiserverArgs } from '../../src/testing/apiserver.ts'
import type { TestPki } from '../../src/testing/pki.ts'

const pem = { cert: 'c.crt', key: 'c.key', pub: 'c.pub' }
const pki = new Proxy({}, { get: () => pem }) as unknown as TestPki
const base = {
  flavor: 'cached' as const,
  bin: 'kube-apiserver',
  port: 6443,
  etcdUrl: 'http://e',
  pki,
  workDir: '/w',
}

test('an extra flag replaces ours of the same name, and the others stay', () => {
  const ours = apiserverArgs(base)
  assert.ok(ours.includes('--disable-admission-plugins=ServiceAccount'))
  const args = apiserverArgs({
    ...base,
    extraArgs: ['--disable-admission-plugins=', '--enable-aggregator-routing=true'],
  })
  assert.deepEqual(
    args.filter((a) => a.startsWith('--disable-admission-plugins')),
    ['--disable-admission-plugins='],
  )
  assert.deepEqual(args.slice(-2), ['--disable-admission-plugins=', '--enable-aggregator-routing=true'])
  assert.equal(args.length, ours.length + 1)
})
