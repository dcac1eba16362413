import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  DEFAULT_START_TIMEOUT_MS,
  resolveTestEnvironmentOptions,
  type TestEnvironmentOptions,
} from '../../src/testing/test-environment.ts'

function rejects(options: unknown, message: RegExp): void {
  assert.throws(
    () => resolveTestEnvironmentOptions(options as TestEnvironmentOptions),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'EDGEOP_ERR_INVALID')
      assert.match(err.message, message)
      return true
    },
  )
}

test('defaults: a local control plane, the default start timeout', () => {
  assert.deepEqual(resolveTestEnvironmentOptions({ env: {} }), {
    useExistingCluster: false,
    kubeconfig: undefined,
    startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  })
})

test('EDGEOP_TEST_USE_EXISTING_CLUSTER=true attaches to the first KUBECONFIG entry; an option overrides both', () => {
  const env = {
    EDGEOP_TEST_USE_EXISTING_CLUSTER: 'true',
    KUBECONFIG: ':/a/config:/b/config',
    HOME: '/home/u',
  }
  assert.deepEqual(resolveTestEnvironmentOptions({ env }), {
    useExistingCluster: true,
    kubeconfig: '/a/config',
    startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  })
  assert.equal(
    resolveTestEnvironmentOptions({ env: { EDGEOP_TEST_USE_EXISTING_CLUSTER: 'true', HOME: '/home/u' } })
      .kubeconfig,
    join('/home/u', '.kube', 'config'),
  )
  assert.equal(resolveTestEnvironmentOptions({ env, useExistingCluster: false }).useExistingCluster, false)
  assert.equal(resolveTestEnvironmentOptions({ env, kubeconfig: '/c' }).kubeconfig, '/c')
})

test('one error naming the wrong option', () => {
  rejects({ crd: ['x.yaml'] }, /unknown option "crd"/)
  rejects({ crds: 'x.yaml' }, /crds must be an array/)
  rejects({ crds: [''] }, /crds\[0\] must be a CRD object or a non-empty path/)
  rejects({ crds: [{}, null] }, /crds\[1\]/)
  rejects({ startTimeoutMs: 0 }, /startTimeoutMs must be a positive number/)
  rejects({ crdInstallTimeoutMs: Number.NaN }, /crdInstallTimeoutMs must be a positive number/)
  rejects({ apiserverArgs: ['v=4'] }, /apiserverArgs\[0\] must be a flag starting with "--"/)
  rejects(
    { useExistingCluster: true, binaryAssetsDirectory: '/bin' },
    /binaryAssetsDirectory and useExistingCluster/,
  )
  rejects({ useExistingCluster: true, apiserverArgs: ['--v=4'] }, /apiserverArgs and useExistingCluster/)
  rejects({ env: {}, kubeconfig: '/c' }, /set useExistingCluster: true/)
})

test('an unknown option is quoted bounded', () => {
  rejects({ ['x'.repeat(500)]: 1 }, /unknown option "x{40}"/)
})
