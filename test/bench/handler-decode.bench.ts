/**
 * @module handler-decode.bench — what a compact store's handler delivery costs, by what the handler reads.
 *
 *   node test/bench/handler-decode.bench.ts [events]     (default 20,000 update events)
 *
 * A script, not a test: nothing here is asserted. `events` update notifications of JSON objects of about
 * 2.4 KB (the bench's Pods) go through one handler of a compact store: the default (both states decoded), an
 * update's old state read as metadata only (`readsOld`), and a metadata-only handler (`reads`, as a
 * controller's handler with metadata predicates). Prints CPU ms and decodes per mode, in-process, no API server.
 */
import { CompactIndexer } from '../../src/cache/compact-indexer.ts'
import { type EventHandler, Listener } from '../../src/cache/listener.ts'
import { jsonCodec } from '../../src/codec/json-codec.ts'
import { encodedObject, type ObjectCodec } from '../../src/core/encoded-object.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { podSpec } from './lib/pods.ts'

const n = Number(process.argv[2] ?? 20_000)
let decodes = 0
const codec: ObjectCodec = {
  ...jsonCodec,
  decode(b) {
    decodes++
    return jsonCodec.decode(b)
  },
}
const pod = (i: number, rv: number): KubeObject => {
  const p = podSpec('ns', i)
  return { ...p, metadata: { ...p.metadata, uid: `u${i}`, resourceVersion: String(rv) } }
}
const stub = (o: KubeObject) =>
  encodedObject(new TextEncoder().encode(JSON.stringify(o)), codec) as KubeObject
// An update's old state is the store's entry, last decoded long ago when many objects change: its own stub here.
const olds = Array.from({ length: n }, (_, k) => stub(pod(k, k)))
const news = Array.from({ length: n }, (_, k) => stub(pod(k, k + n)))

for (const [mode, marks] of [
  ['whole objects (default)', {}],
  ["readsOld: 'metadata'", { readsOld: 'metadata' }],
  ["reads: 'metadata'", { reads: 'metadata' }],
] as const) {
  const store = new CompactIndexer()
  let seen = 0
  const handler: EventHandler = { ...marks, onUpdate: () => void seen++ }
  const l = new Listener(
    handler,
    0,
    () => true,
    async () => {},
    () => {},
    noopLogger,
    (e) => store.resolve(e),
  )
  decodes = 0
  const cpu = process.cpuUsage()
  for (let k = 0; k < n; k++) l.notify({ kind: 'update', old: olds[k]!, obj: news[k]! })
  while (seen < n) await new Promise((r) => setImmediate(r))
  const used = process.cpuUsage(cpu)
  process.stdout.write(
    `${mode.padEnd(26)} ${((used.user + used.system) / 1000).toFixed(0).padStart(6)} ms CPU, ${decodes} decodes for ${n} updates\n`,
  )
}
