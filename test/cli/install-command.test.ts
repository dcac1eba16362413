/**
 * installCommands' decisions that the real apiserver cannot be made to take on demand: a CRD that
 * never becomes Established fails `install` after the bound (time injected, no sleep), and
 * uninstall's refusal counts "1+" when more objects than it listed exist.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CRD_ESTABLISHED_POLL_MS,
  CRD_ESTABLISHED_TIMEOUT_MS,
  EXIT_RESOURCES_EXIST,
  type InstallClient,
  installCommands,
} from '../../src/cli/install-command.ts'
import type { ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'

const WIDGETS: ResourceType = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
  kind: 'Widget',
}
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
} as KubeObject

/** A client whose CRD never gets a condition and whose widget list has one item and a next page. */
function fakeClient(calls: string[]): InstallClient {
  return {
    mapper: {
      forApiVersionKind: async (apiVersion: string, kind: string) => ({
        ...WIDGETS,
        kind,
        resource: `${kind}@${apiVersion}`,
      }),
    },
    resource: () => ({
      apply: async (o: KubeObject) => {
        calls.push(`apply ${o.metadata.name}`)
        return o
      },
      get: async (name: string) => ({ ...CRD, metadata: { name }, status: { conditions: [] } }),
      listMetadata: async () => ({
        metadata: { continue: 'next' },
        items: [{ metadata: { name: 'w1', namespace: 'ns' } }],
      }),
      delete: async (name: string) => calls.push(`delete ${name}`),
    }),
    close: async () => {},
  } as unknown as InstallClient
}

const sink = () => {
  const lines: string[] = []
  return { lines, write: (s: string) => lines.push(s) }
}

test('install: a CRD never Established fails after the bound, naming it, without sleeping for real', async () => {
  const calls: string[] = []
  const out = sink()
  const err = sink()
  let slept = 0
  const { install } = installCommands({
    objects: () => [CRD],
    customResources: [WIDGETS],
    fieldManager: 'widget-operator',
    stdout: out,
    stderr: err,
    connect: async () => fakeClient(calls),
    sleep: async (ms) => {
      slept += ms
    },
  })
  const code = await install.run({ kubeconfig: '', context: '' }, [])
  assert.equal(code, 1)
  assert.deepEqual(calls, ['apply widgets.example.com'])
  assert.equal(slept, CRD_ESTABLISHED_TIMEOUT_MS)
  assert.ok(slept / CRD_ESTABLISHED_POLL_MS > 1)
  assert.match(
    err.lines.join(''),
    /CustomResourceDefinition\/widgets\.example\.com .*not Established after 30 s/,
  )
  assert.deepEqual(out.lines, [])
})

test('uninstall: more objects than the one listed read "1+ Widgets"; nothing is deleted without --force', async () => {
  const calls: string[] = []
  const err = sink()
  const { uninstall } = installCommands({
    objects: () => [CRD],
    customResources: [WIDGETS],
    fieldManager: 'widget-operator',
    stdout: sink(),
    stderr: err,
    connect: async () => fakeClient(calls),
  })
  const code = await uninstall.run({ kubeconfig: '', context: '', force: false }, [])
  assert.equal(code, EXIT_RESOURCES_EXIST)
  assert.match(err.lines.join(''), /refused: 1\+ Widgets \(e\.g\. ns\/w1\) still exist/)
  assert.deepEqual(calls, [])
})
