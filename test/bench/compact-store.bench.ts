/**
 * @module compact-store.bench — the compact store against the eager one: time to synced against the bare wire
 * floor, and heap, ArrayBuffer and RSS bytes per cached object, at Node's default flags, with `--optimize-for-size`
 * and with `--max-semi-space-size=1` (docs/native-memory.md's recipe for library users), for a
 * custom resource of about 3 KB, for the AppService custom resource as its operator leaves it, and for a
 * metadata-only informer of Pods.
 *
 *   node test/bench/compact-store.bench.ts [objects] [rounds] [subject]
 *       (default 10,000 objects, 3 rounds, subject `benchapps`; or `appservices`, `pod-metadata`)
 *
 * A script, not a test: nothing here is asserted. It starts a private real control plane and creates the
 * subject's objects once:
 * - `benchapps`: a custom resource whose objects carry about 3 KB of spec (an application's containers, env and
 *   config, kept with `x-kubernetes-preserve-unknown-fields`) plus labels and an owner reference;
 * - `appservices`: the AppService CRD (src/operators/appservice) with a spec and a status as the operator writes
 *   it (three conditions, ready replicas, selector, endpoint);
 * - `pod-metadata`: the benchmarks' Pods (test/bench/lib/pods.ts: three writers, an owner reference, four
 *   labels, an annotation), watched by a metadata-only informer (protobuf PartialObjectMetadata on the wire).
 * Every measurement runs in a fresh child process (`--expose-gc`, and the V8 flag its row names):
 * - `floor`: one streaming list (a watch with `sendInitialEvents`) read by the transport and only counted,
 *   until the `k8s.io/initial-events-end` bookmark: what any client must wait for.
 * - `eager` / `compact`: an informer from the factory with that store, from start to `whenSynced()`.
 *   Memory: after two full GCs, heapUsed, arrayBuffers and RSS with the informer synced, minus the same
 *   before it started, divided by the objects; and the average JSON size of one cached object without
 *   managedFields (the target for memory per object). That growth includes what a process pays once (code
 *   compiled on first use, buffers kept), so each row also runs an informer on a label-selected part of the
 *   objects: the difference between the two, per object more, is the slope, what one more cached object costs.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { InformerFactory } from '../../src/cache/factory.ts'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType, resourcePath } from '../../src/client/resource.ts'
import { acceptHeader } from '../../src/codec/content-negotiation.ts'
import { PROTOBUF_DECODERS } from '../../src/codec/protobuf/protobuf-decoders.ts'
import { loadClusterConfig } from '../../src/config/load.ts'
import { ENCODED, isEncodedObject } from '../../src/core/encoded-object.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { seedPods } from './lib/pods.ts'

const GROUP = 'bench.edgeop.dev'
const BENCHAPPS: ResourceType = {
  group: GROUP,
  version: 'v1',
  resource: 'benchapps',
  kind: 'BenchApp',
  namespaced: true,
}

/** What one run measures: the objects' type, whether the informer is metadata-only, and the floor's Accept. */
interface Subject {
  type: ResourceType
  metadataOnly: boolean
  /** The Accept header of the floor's streaming list: what the informer asks for. */
  floorAccept: string
  /** A label selector that caches a part of the objects: the slope between the two is the cost per object. */
  subset: string
}

const SUBJECTS: Record<string, Subject> = {
  benchapps: { type: BENCHAPPS, metadataOnly: false, floorAccept: 'application/json', subset: 'team=team-0' },
  appservices: {
    type: APPSERVICES,
    metadataOnly: false,
    floorAccept: 'application/json',
    subset: 'team=team-0',
  },
  'pod-metadata': {
    type: CORE_TYPES.pods,
    metadataOnly: true,
    floorAccept: acceptHeader(PROTOBUF_DECODERS.partialObjectMetadata, 'PartialObjectMetadata'),
    subset: 'tier=frontend',
  },
}

function subjectOf(name: string): Subject {
  const subject = SUBJECTS[name]
  if (!subject)
    throw new Error(`unknown subject ${JSON.stringify(name)}: one of ${Object.keys(SUBJECTS).join(', ')}`)
  return subject
}
const SELF = fileURLToPath(import.meta.url)

interface Sample {
  ms: number
  /** Objects cached, and the growth of heapUsed and RSS in bytes, in all. */
  objects?: number
  heapBytes?: number
  rssBytes?: number
  heap?: number
  buffers?: number
  rss?: number
  jsonBytes?: number
  wireBytes?: number
}

/** About 3 KB of spec: what an application CR with a few containers, env and config carries. */
function spec(i: number): Record<string, unknown> {
  return {
    image: `registry.example.com/team-${i % 7}/app:${1 + (i % 13)}.4.${i % 100}`,
    replicas: 1 + (i % 5),
    port: 8080,
    env: Array.from({ length: 16 }, (_, k) => ({
      name: `SETTING_${k}_NAME`,
      value: `value-${k}-${i}-${'x'.repeat(20)}`,
    })),
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    config: {
      'application.yaml': `server:\n  port: 8080\nlogging:\n  level: info\nfeature-flags:\n${Array.from({ length: 12 }, (_, k) => `  flag-${k}: ${k % 2 === 0}\n`).join('')}`,
    },
    sidecars: Array.from({ length: 3 }, (_, k) => ({
      name: `sidecar-${k}`,
      image: `registry.example.com/infra/sidecar-${k}:2.1`,
      args: ['--listen=:9000', `--upstream=127.0.0.1:${8080 + k}`, '--log-format=json'],
    })),
    database: { enabled: i % 3 === 0, class: 'standard' },
  }
}

/** Creates `n` BenchApps in `ns` (those there already count), their CRD first. */
async function seedBenchApps(admin: KubeClient, ns: string, n: number): Promise<void> {
  const crds = admin.resource(CORE_TYPES.customResourceDefinitions)
  await crds.apply(
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `benchapps.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'benchapps', singular: 'benchapp', kind: 'BenchApp', listKind: 'BenchAppList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            },
          },
        ],
      },
    } as KubeObject,
    { fieldManager: 'bench', force: true },
  )
  for (let t = 0; ; t++) {
    const ok = await admin
      .resource(BENCHAPPS, ns)
      .list({ limit: 1 })
      .then(
        () => true,
        () => false,
      )
    if (ok) break
    if (t > 300) throw new Error('CRD not served')
    await new Promise((r) => setTimeout(r, 100))
  }
  await admin
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
    .catch(() => {})
  const apps = admin.resource(BENCHAPPS, ns)
  const existing = (await apps.list({ limit: 1 })).metadata?.remainingItemCount ?? 0
  if (existing + 1 < n) {
    process.stderr.write(`creating ${n} BenchApps in ${ns}…\n`)
    for (let i = 0; i < n; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) =>
          apps
            .create({
              apiVersion: `${GROUP}/v1`,
              kind: 'BenchApp',
              metadata: {
                name: `app-${i + j}`,
                labels: { app: `app-${i + j}`, team: `team-${(i + j) % 7}`, tier: 'web' },
                ownerReferences: [
                  {
                    apiVersion: 'v1',
                    kind: 'ConfigMap',
                    name: 'owner',
                    uid: `00000000-0000-0000-0000-${String((i + j) % 50).padStart(12, '0')}`,
                    controller: true,
                  },
                ],
              },
              spec: spec(i + j),
            } as KubeObject)
            .catch(() => {}),
        ),
      )
  }
}

/** The AppService CRD and `n` AppServices in `ns` as the operator leaves them: a spec, and a status it wrote. */
async function seedAppServices(admin: KubeClient, ns: string, n: number): Promise<void> {
  const { installAppServiceCrd } = await import('../support/appservice.ts')
  await installAppServiceCrd(admin)
  const apps = admin.resource(APPSERVICES, ns)
  if (((await apps.list({ limit: 1 })).metadata?.remainingItemCount ?? 0) + 1 >= n) return
  process.stderr.write(`creating ${n} AppServices in ${ns}…\n`)
  const t = '2026-11-01T08:00:00Z'
  const one = async (i: number): Promise<void> => {
    const name = `app-${i}`
    await apps
      .create({
        metadata: { name, labels: { app: name, team: `team-${i % 7}` } },
        spec: {
          image: `registry.example.com/team-${i % 7}/app:1.${i % 13}.${i % 100}`,
          replicas: 2,
          port: 8080,
          ...(i % 3 === 0 ? { database: { enabled: true, class: 'standard' } } : {}),
        },
      } as AppService)
      .catch(() => {})
    const ready = 'Deployment has 2 of 2 replicas ready'
    await apps.patch(
      name,
      {
        status: {
          observedGeneration: 1,
          readyReplicas: 2,
          selector: `app.kubernetes.io/instance=${name}`,
          endpoint: `http://${name}.${ns}.svc:8080`,
          ...(i % 3 === 0 ? { database: { phase: 'Ready' } } : {}),
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Available',
              message: ready,
              lastTransitionTime: t,
              observedGeneration: 1,
            },
            {
              type: 'Progressing',
              status: 'False',
              reason: 'Available',
              message: ready,
              lastTransitionTime: t,
              observedGeneration: 1,
            },
            {
              type: 'Degraded',
              status: 'False',
              reason: 'AsExpected',
              message: 'reconciled',
              lastTransitionTime: t,
              observedGeneration: 1,
            },
          ],
        },
      },
      'merge',
      { subresource: 'status' },
    )
  }
  for (let i = 0; i < n; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => one(i + j)))
}

/** `n` of the benchmarks' Pods in `ns`, each written by its three writers. */
async function seedPodsOnce(admin: KubeClient, ns: string, n: number): Promise<void> {
  await admin
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
    .catch(() => {})
  const pods = admin.resource(CORE_TYPES.pods, ns)
  if (((await pods.list({ limit: 1 })).metadata?.remainingItemCount ?? 0) + 1 >= n) return
  process.stderr.write(`creating ${n} Pods in ${ns}…\n`)
  await seedPods(
    admin,
    ns,
    Array.from({ length: n }, (_, i) => i),
    { onProgress: (d) => process.stderr.write(`  ${d}\n`) },
  )
}

async function parent(n: number, rounds: number, name: string): Promise<void> {
  const subject = subjectOf(name)
  const { getTestEnv } = await import('../controlplane/env.ts')
  const { adminClient } = await import('../support/kube.ts')
  const env = await getTestEnv()
  const admin = adminClient(env, env.server)
  const ns = `edgeop-bench-compact-${n}`
  await admin
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
    .catch(() => {})
  const seed = { benchapps: seedBenchApps, appservices: seedAppServices, 'pod-metadata': seedPodsOnce }[name]!
  await seed(admin, ns, n)
  const kubeconfig = await env.writeKubeconfig({ server: env.server })
  const run = (mode: string, flags: string[], selector = ''): Promise<Sample> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [...flags, '--expose-gc', SELF, 'child', mode, kubeconfig, ns, String(n), name, selector],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.on('exit', (code) =>
        code === 0 ? resolve(JSON.parse(out) as Sample) : reject(new Error(`${mode}: exit ${code}`)),
      )
    })
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const rows: string[] = []
  const floor: number[] = []
  const results = new Map<string, Sample[]>()
  // Per round, the heap and RSS per object between the subset's informer and the whole one: what one more
  // cached object costs, without the code compiled and the buffers kept once per process.
  const slopes = new Map<string, { heap: number; rss: number }[]>()
  for (let r = 0; r < rounds; r++) {
    // Interleaved, so drift in the machine's load touches every row alike.
    floor.push((await run('floor', [])).ms)
    for (const flags of [[], ['--optimize-for-size'], ['--max-semi-space-size=1']])
      for (const mode of ['eager', 'compact']) {
        const key = [mode, ...flags].join(' ')
        const all = await run(mode, flags)
        const part = await run(mode, flags, subject.subset)
        results.set(key, [...(results.get(key) ?? []), all])
        const d = all.objects! - part.objects!
        slopes.set(key, [
          ...(slopes.get(key) ?? []),
          { heap: (all.heapBytes! - part.heapBytes!) / d, rss: (all.rssBytes! - part.rssBytes!) / d },
        ])
      }
  }
  const f = median(floor)
  const kb = (x: number | undefined): string => (x === undefined ? '' : `${(x / 1024).toFixed(2)} KB`)
  rows.push(
    `\n${n} ${name === 'pod-metadata' ? 'Pods, metadata-only informer (protobuf PartialObjectMetadata)' : `${subject.type.kind}s (custom resource)`}, median of ${rounds} rounds, ${new Date().toISOString().slice(0, 10)}, ${process.version}`,
    `bare wire floor (streaming list as the informer asks for it, bytes counted only): ${Math.round(f)} ms`,
    '',
    `slope: between an informer of all and one of \`${subject.subset}\`, per object more`,
    '',
    '| store, flags | synced | ÷ floor | heap / object | ArrayBuffers / object | heap + buffers / object | RSS / object | heap / object, slope | RSS / object, slope | JSON / object (no managedFields) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  )
  for (const [key, xs] of results) {
    const m = (k: keyof Sample) =>
      xs.every((x) => x[k] !== undefined) ? median(xs.map((x) => x[k]!)) : undefined
    const ms = m('ms')!
    const slope = slopes.get(key)!
    rows.push(
      `| ${key} | ${Math.round(ms)} ms | ${(ms / f).toFixed(2)} | ${kb(m('heap'))} | ${kb(m('buffers'))} | ${kb((m('heap') ?? 0) + (m('buffers') ?? 0))} | ${kb(m('rss'))} | ${kb(median(slope.map((x) => x.heap)))} | ${kb(median(slope.map((x) => x.rss)))} | ${kb(m('jsonBytes'))} |`,
    )
  }
  process.stdout.write(`${rows.join('\n')}\n`)
  await admin.close()
  process.exit(0)
}

async function child(
  mode: string,
  kubeconfig: string,
  ns: string,
  n: number,
  name: string,
  selector: string,
): Promise<void> {
  const subject = subjectOf(name)
  const gc = (globalThis as { gc?: () => void }).gc!
  const client = new KubeClient(await loadClusterConfig({ kubeconfig }), { qps: -1 })
  if (mode === 'floor') {
    const t0 = performance.now()
    const path = `${resourcePath(subject.type, ns)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600`
    const res = await client.transport.stream({ method: 'GET', path, accept: subject.floorAccept })
    const marker = Buffer.from('k8s.io/initial-events-end')
    let tail = Buffer.alloc(0)
    let bytes = 0
    for await (const chunk of res.body) {
      bytes += chunk.length
      const window = Buffer.concat([tail, chunk])
      if (window.includes(marker)) break
      tail = window.subarray(Math.max(0, window.length - marker.length))
    }
    const ms = performance.now() - t0
    res.close()
    process.stdout.write(JSON.stringify({ ms, wireBytes: bytes }))
    await client.close()
    process.exit(0)
  }
  gc()
  gc()
  const before = process.memoryUsage()
  const factory = new InformerFactory(client, { store: mode === 'compact' ? 'compact' : 'eager' })
  const informer = factory.informer({
    type: subject.type,
    namespace: ns,
    metadataOnly: subject.metadataOnly,
    ...(selector ? { labelSelector: selector } : {}),
  })
  const ac = new AbortController()
  const t0 = performance.now()
  factory.start(ac.signal)
  await informer.whenSynced()
  const ms = performance.now() - t0
  const objects = informer.store.size
  if (selector ? objects === 0 || objects >= n : objects !== n)
    throw new Error(`synced ${objects} of ${n}${selector ? ` (${selector})` : ''}`)
  await new Promise((r) => setTimeout(r, 200))
  gc()
  gc()
  const after = process.memoryUsage()
  // The JSON size of the cached objects without managedFields (they are cut in both stores).
  let jsonBytes = 0
  for (const o of informer.store.list()) jsonBytes += Buffer.byteLength(JSON.stringify(o))
  const compactEntries = (informer.store as unknown as { entries?: () => KubeObject[] }).entries?.() ?? []
  const stubs = compactEntries.filter(isEncodedObject)
  const stubBytes = stubs.reduce((s, o) => s + o[ENCODED].length, 0)
  process.stdout.write(
    JSON.stringify({
      ms,
      objects,
      heapBytes: after.heapUsed - before.heapUsed,
      rssBytes: after.rss - before.rss,
      heap: (after.heapUsed - before.heapUsed) / objects,
      buffers: (after.arrayBuffers - before.arrayBuffers) / objects,
      rss: (after.rss - before.rss) / objects,
      jsonBytes: jsonBytes / objects,
      ...(stubs.length ? { wireBytes: stubBytes / objects } : {}),
    } satisfies Sample),
  )
  ac.abort()
  await factory.stopped()
  await client.close()
  process.exit(0)
}

if (process.argv[2] === 'child')
  await child(
    process.argv[3]!,
    process.argv[4]!,
    process.argv[5]!,
    Number(process.argv[6]),
    process.argv[7]!,
    process.argv[8] ?? '',
  )
else
  await parent(
    Number(process.argv[2] ?? 10_000),
    Number(process.argv[3] ?? 3),
    process.argv[4] ?? 'benchapps',
  )
