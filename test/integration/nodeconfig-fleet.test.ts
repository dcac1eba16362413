/**
 * The NodeConfig agent at fleet scale, on the real control plane: what the shared
 * `status.nodes[]` design costs per node (measured, then extrapolated to the fleet size at
 * which etcd refuses the object).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { fieldManagerFor, nextEntry, statusApplyBody } from '../../src/operators/nodeconfig/status.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'
import { installNodeConfigCrd } from './fixtures/nodeconfig-harness.ts'

const run = randomBytes(4).toString('hex')
const { env, setup } = useTestEnv()
let client: KubeClient
const created = new Set<string>()

setup(async () => {
  client = adminClient(env(), env().server)
  await installNodeConfigCrd(client)
})

after(async () => {
  for (const name of created)
    await client
      ?.resource(NODECONFIGS)
      .delete(name)
      .catch(() => {})
  await client?.close()
})

/** etcd's default `--max-request-bytes`: 1.5 MiB, the largest value it stores. */
const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024
/** A node name of the length edge fleets use (site, rack, index): 24 characters. */
const nodeName = (i: number) =>
  `edge-site-${String(i).padStart(4, '0')}-node-${String(i % 100).padStart(3, '0')}`

test('the shared status grows by a measured number of bytes per node, and etcd refuses it at a fleet size below 5,000', async () => {
  const name = `fleet-measure-${run}`
  created.add(name)
  const ncs = client.resource(NODECONFIGS)
  const config = await ncs.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name },
    spec: { files: [{ path: 'etc/chrony.conf', content: 'server ntp.example.com iburst\n', mode: '0644' }] },
  } as NodeConfig)
  const size = async () => Buffer.byteLength(JSON.stringify(await ncs.get(name)))
  const base = await size()
  const ENTRIES = 20
  const now = new Date('2026-12-02T00:00:00Z')
  // Exactly what the shipped agent applies: its entry, under its own field manager.
  for (let i = 0; i < ENTRIES; i++) {
    const entry = nextEntry(
      config,
      nodeName(i),
      { state: 'Applied', message: '1 file in place' },
      undefined,
      now,
    )
    await ncs.apply(statusApplyBody(config, entry) as NodeConfig, {
      fieldManager: fieldManagerFor(nodeName(i)),
      force: true,
      subresource: 'status',
    })
  }
  const grown = await size()
  const perNode = (grown - base) / ENTRIES
  const failsAt = Math.floor((ETCD_MAX_REQUEST_BYTES - base) / perNode)
  // One rollout: N status writes, each delivered as a watch event to all N agents.
  const rolloutEvents = (n: number) => n * n
  const rolloutBytes = (n: number) => n * (n * base + (perNode * n * (n + 1)) / 2)
  const line = `base ${base} B, ${perNode} B per node (status entry + managedFields entry), etcd refuses the object at ${failsAt + 1} nodes; a rollout to 1,000 nodes delivers ${rolloutEvents(1000).toLocaleString('en')} events, ${(rolloutBytes(1000) / 2 ** 30).toFixed(1)} GiB`
  console.log(line)
  assert.ok(perNode > 100, `${perNode} B per node: an entry and its managedFields cannot be smaller`)
  assert.ok(failsAt < 5000, line)
})
