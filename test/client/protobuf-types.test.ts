import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import * as esbuild from 'esbuild'
import * as client from '../../src/client/index.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'

const SRC = join(import.meta.dirname, '../../src')
const PAIRS = {
  namespaces: 'PROTOBUF_NAMESPACES',
  configMaps: 'PROTOBUF_CONFIG_MAPS',
  secrets: 'PROTOBUF_SECRETS',
  services: 'PROTOBUF_SERVICES',
  pods: 'PROTOBUF_PODS',
  nodes: 'PROTOBUF_NODES',
  deployments: 'PROTOBUF_DEPLOYMENTS',
  leases: 'PROTOBUF_LEASES',
  events: 'PROTOBUF_EVENTS',
} as const

test('each protobuf-carrying type is its CORE_TYPES entry plus the protobuf kind of the same apiVersion and kind', () => {
  const exported = client as unknown as Record<string, client.ResourceType | undefined>
  for (const [core, name] of Object.entries(PAIRS)) {
    const t = exported[name]
    assert.ok(t, `${name} is exported from edgeop/client`)
    const { protobuf, ...rest } = t
    const c = CORE_TYPES[core as keyof typeof PAIRS]
    assert.deepEqual(rest, c, name)
    assert.equal(protobuf?.apiVersion, c.group ? `${c.group}/${c.version}` : c.version, name)
    assert.equal(protobuf?.kind, c.kind, name)
  }
})

/** What a minified bundle of `code` (importing from src/client) contains. */
async function bundle(code: string): Promise<string> {
  const r = await esbuild.build({
    stdin: { contents: code, resolveDir: SRC, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    write: false,
    external: ['undici', 'undici/*', 'zod', 'zod/*'],
    logLevel: 'error',
  })
  return r.outputFiles[0]!.text
}

test('a bundle carries the protobuf tables of the types it uses, and none when it uses only CORE_TYPES', async () => {
  const pods = await bundle("import { PROTOBUF_PODS } from './client/index.ts'; console.log(PROTOBUF_PODS)")
  assert.match(pods, /"v1 Pod"/)
  assert.doesNotMatch(pods, /"apps\/v1 Deployment"/, 'no Deployment table for a Pod informer')
  const core = await bundle("import { CORE_TYPES } from './client/index.ts'; console.log(CORE_TYPES.pods)")
  assert.doesNotMatch(core, /"v1 Pod"|PodSpec/, 'no protobuf table without a protobuf type')
})
