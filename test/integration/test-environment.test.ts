/**
 * edgeop/testing's startTestEnvironment against real binaries: what it starts it stops (processes,
 * ports, temp and etcd data directories), CRDs are served when it returns, and two environments in
 * one process do not share anything.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { startTestEnvironment, type TestEnvironment } from '../../src/testing/test-environment.ts'
import { isNotFound } from '../../src/transport/api-error.ts'
import { listeningPortsOf, processesMarkedBy, stillRunning } from '../support/process-tree.ts'

const MARK = 'EDGEOP_TESTENV_TEST_MARK'
const execFileP = promisify(execFile)

const WIDGETS: ResourceType = {
  group: 'testenv.example.com',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
  kind: 'Widget',
}

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.testenv.example.com' },
  spec: {
    group: 'testenv.example.com',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
}

/** Starts an environment whose processes carry a fresh mark in their environment; returns both. */
async function startMarked(
  options: Parameters<typeof startTestEnvironment>[0] = {},
): Promise<{ env: TestEnvironment; mark: string }> {
  const mark = randomBytes(6).toString('hex')
  process.env[MARK] = mark
  try {
    return { env: await startTestEnvironment(options), mark }
  } finally {
    delete process.env[MARK]
  }
}

test('stop() leaves no process, listening port, work directory or etcd data behind', async () => {
  const { env, mark } = await startMarked()
  const procs = processesMarkedBy(MARK, mark)
  assert.deepEqual(procs.map((p) => p.command.split(' ')[0]!.split('/').pop()).sort(), [
    'etcd',
    'kube-apiserver',
  ])
  const ports = listeningPortsOf(procs)
  assert.ok(ports.has(Number(new URL(env.server).port)), 'the apiserver listens on the server port')
  const dataDir = /--data-dir=(\S+)/.exec(procs.find((p) => p.command.includes('etcd'))!.command)![1]!
  const workDir = dirname(env.kubeconfig)
  assert.ok(existsSync(dataDir) && existsSync(workDir))

  await env.stop()
  assert.deepEqual(
    procs.filter(stillRunning).map((p) => p.command),
    [],
  )
  assert.deepEqual([...listeningPortsOf(procs).keys()], [])
  assert.equal(existsSync(workDir), false, `${workDir} removed`)
  assert.equal(existsSync(dataDir), false, `${dataDir} removed`)
  await env.stop() // idempotent
})

test('a process that exits without stop() takes its environment with it (exit hook)', async () => {
  const mark = randomBytes(6).toString('hex')
  const module = JSON.stringify(new URL('../../src/testing/test-environment.ts', import.meta.url).href)
  const script = `const { startTestEnvironment } = await import(${module})
const env = await startTestEnvironment()
process.stdout.write(env.kubeconfig + '\\n')
process.exit(0)`
  const { stdout } = await execFileP(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, [MARK]: mark },
  })
  const workDir = dirname(stdout.trim())
  assert.match(workDir, /edgeop-testenv-/)
  assert.deepEqual(
    processesMarkedBy(MARK, mark).map((p) => p.command),
    [],
  )
  assert.equal(existsSync(workDir), false, `${workDir} removed`)
})

test('CRDs are served when startTestEnvironment and installCrds return: the first request succeeds', async () => {
  const env = await startTestEnvironment({ crds: [widgetCrd] })
  try {
    const ns = await env.createNamespace('widgets')
    // No retry: a CRD that is not yet served answers 404 here.
    const created = await env.client
      .resource(WIDGETS, ns)
      .create({ apiVersion: 'testenv.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, size: 3 })
    assert.equal(created.metadata.name, 'w')
    assert.deepEqual(
      env.crds.map((c) => c.metadata.name),
      ['widgets.testenv.example.com'],
    )
    const established = (
      env.crds[0] as KubeObject & { status: { conditions: { type: string; status: string }[] } }
    ).status.conditions
    assert.ok(established.some((c) => c.type === 'Established' && c.status === 'True'))

    const gadgets = {
      ...widgetCrd,
      metadata: { name: 'gadgets.testenv.example.com' },
      spec: {
        ...widgetCrd.spec,
        names: { kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget' },
      },
    }
    await env.installCrds([gadgets])
    const list = await env.client.resource({ ...WIDGETS, resource: 'gadgets', kind: 'Gadget' }, ns).list()
    assert.deepEqual(list.items, [])
  } finally {
    await env.stop()
  }
})

test('two environments in one process are independent', async () => {
  const [a, b] = await Promise.all([startTestEnvironment({ crds: [widgetCrd] }), startTestEnvironment()])
  try {
    assert.notEqual(a.server, b.server)
    assert.notEqual(a.kubeconfig, b.kubeconfig)
    const ns = await a.createNamespace('only-in-a')
    await assert.rejects(b.client.resource(CORE_TYPES.namespaces).get(ns), isNotFound)
    await assert.rejects(b.client.resource(WIDGETS, 'default').list(), isNotFound)

    await a.stop()
    // b keeps working after a is gone.
    const nsB = await b.createNamespace('b-after-a')
    assert.equal((await b.client.resource(CORE_TYPES.namespaces).get(nsB)).metadata.name, nsB)
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
})
