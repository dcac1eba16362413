/**
 * Connections that die without a reset (a NAT or firewall that forgets a flow): the client runs in a
 * network namespace of its own (test/support/link-namespace.ts), every flow it has open is dropped in
 * both directions mid-stream, and new flows pass. The leader keeps its Lease, the watch is found dead
 * and resumes from its resourceVersion without a relist. The times to detect and recover are printed
 * as test diagnostics (docs/edge-networks.md records them); they are not asserted.
 *
 * Chain: client (namespace) → veth → forwarder (host end) → fault proxy (records requests) → apiserver.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { adminClient } from '../support/kube.ts'
import { LinkNamespace } from '../support/link-namespace.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

interface Line {
  /** `performance.now()` in this process when the line arrived. */
  t: number
  event: string
  name?: string
  failures?: number
}

for (const http2 of [true, false]) {
  test(`HTTP/${http2 ? '2' : '1.1'}: every open flow dropped silently mid-stream; the leader keeps its Lease and the watch resumes without a relist`, async (t) => {
    const link = LinkNamespace.create()
    defer(() => link.destroy())
    const fault = await env().startFaultProxy()
    defer(() => fault.close())
    const port = await link.forwardTo(Number(new URL(fault.url).port))
    const direct = adminClient(env(), env().server)
    defer(() => direct.close())
    const ns = await env().createNamespace('dead-flow')
    const lease = 'edge-link'

    const child = link.spawn(
      [process.execPath, join(import.meta.dirname, 'fixtures', 'edge-link-client.ts')],
      {
        ...process.env,
        EDGE_LINK_CONFIG: JSON.stringify({
          server: `https://${link.hostIp}:${port}`,
          serverName: 'localhost',
          ca: env().caPem,
          cert: env().admin.certPem,
          key: env().admin.keyPem,
          namespace: ns,
          lease,
          http2,
        }),
      },
    )
    defer(() => void child.kill('SIGTERM'))
    const lines: Line[] = []
    createInterface({ input: child.stdout! }).on('line', (l) => {
      lines.push({ ...(JSON.parse(l) as Omit<Line, 't'>), t: performance.now() })
    })
    const seen = (event: string, name?: string) =>
      lines.find((l) => l.event === event && (name === undefined || l.name === name))
    await eventually(() => seen('synced') && seen('leading'), {
      timeoutMs: 30_000,
      what: 'client synced and leading',
    })
    const configMaps = direct.resource(CORE_TYPES.configMaps, ns)
    await configMaps.create({ metadata: { name: 'before' } })
    await eventually(() => seen('add', 'before'), { timeoutMs: 10_000, what: 'the watch delivers before' })
    const leases = direct.resource(CORE_TYPES.leases, ns)
    const transitions = (await leases.get(lease)).spec?.leaseTransitions ?? 0

    const flowsBefore = link.flows.length
    const lists = () => fault.requests((r) => !r.watch && r.path.endsWith('/configmaps')).length
    const listsBefore = lists()
    const open = link.flows.filter((f) => !f.socket.destroyed).map((f) => f.port)
    const droppedAt = performance.now()
    link.dropFlows(open)
    await configMaps.create({ metadata: { name: 'after' } })

    // Watch the Lease from outside while the client finds out.
    let lastRenew = (await leases.get(lease)).spec?.renewTime
    let renewedAt = droppedAt
    let longestGapMs = 0
    await eventually(
      async () => {
        const spec = (await leases.get(lease)).spec
        const now = performance.now()
        if (spec?.renewTime !== lastRenew) {
          longestGapMs = Math.max(longestGapMs, now - renewedAt)
          lastRenew = spec?.renewTime
          renewedAt = now
        }
        return seen('add', 'after')
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the watch delivers an object created after the drop' },
    )
    longestGapMs = Math.max(longestGapMs, performance.now() - renewedAt)
    const newFlow = link.flows.slice(flowsBefore)[0]
    const report = {
      http: http2 ? '2' : '1.1',
      flowsDropped: open.length,
      newConnectionAfterMs: newFlow ? Math.round(newFlow.openedAt - droppedAt) : undefined,
      watchDeliveredAfterMs: Math.round(seen('add', 'after')!.t - droppedAt),
      longestLeaseRenewGapMs: Math.round(longestGapMs),
    }
    t.diagnostic(JSON.stringify(report))
    console.log(`dead-flows: ${JSON.stringify(report)}`)

    assert.equal(seen('stopped-leading'), undefined, 'the leader never stopped leading')
    const after = await leases.get(lease)
    assert.equal(after.spec?.holderIdentity, 'edge-link')
    assert.equal(after.spec?.leaseTransitions ?? 0, transitions, 'no other term began')
    assert.equal(lists(), listsBefore, 'the watch resumed from its resourceVersion: no relist')
  })
}
