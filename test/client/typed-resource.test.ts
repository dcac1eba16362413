/**
 * Typed built-ins on the resource client and the informer factory. The type checks are the
 * point: `tsc --noEmit` fails when `client.resource(CORE_TYPES.deployments)` stops being a
 * `ResourceClient<Deployment>`, when a Pod can be created through it, or when an explicit type
 * argument stops compiling. At run time: the phantom type is never a property, so the typed
 * `CORE_TYPES` are the same objects as before. The reference operators' own resource types
 * (`APPSERVICES`, `NODECONFIGS`) are typed the same way, as a user's operator would declare them.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Deployment, Lease, Pod } from '../../src/api/index.ts'
import { InformerFactory } from '../../src/cache/factory.ts'
import type { SharedInformer } from '../../src/cache/informer.ts'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import type { Lease as CoreLease, KubeEvent, KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/index.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/index.ts'

/** True only when A and B are the same type (not merely assignable). */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false
/** Compiles only for `true`. */
const typeIs = (_: true): void => {}

const client = new KubeClient({
  server: 'https://127.0.0.1:1',
  tls: { insecureSkipVerify: false },
  namespace: 'default',
  source: 'typed-resource test (never connects)',
})

test('a typed resource type gives a typed client; an explicit type argument is taken as given', () => {
  const deployments = client.resource(CORE_TYPES.deployments, 'ns')
  typeIs(true as Equal<typeof deployments, ResourceClient<Deployment>>)
  typeIs(true as Equal<ReturnType<typeof deployments.get>, Promise<Deployment>>)
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }
  // @ts-expect-error a Pod is not a Deployment
  void (() => deployments.create(pod))
  const replicas: number | undefined = ({} as Deployment).spec?.replicas
  void replicas

  // Call sites written before the types existed keep compiling.
  typeIs(true as Equal<ReturnType<typeof client.resource<KubeEvent>>, ResourceClient<KubeEvent>>)
  const events = client.resource<KubeEvent>(CORE_TYPES.events, 'ns')
  const leases = client.resource<CoreLease>(CORE_TYPES.leases, 'ns')
  typeIs(true as Equal<typeof leases, ResourceClient<CoreLease>>)
  const untyped: ResourceType = { group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true }
  typeIs(true as Equal<ReturnType<typeof client.resource<KubeObject>>, ReturnType<typeof client.resource>>)
  const widgets = client.resource(untyped, 'ns')
  typeIs(true as Equal<typeof widgets, ResourceClient<KubeObject>>)

  assert.equal(deployments.type, CORE_TYPES.deployments)
  assert.equal(events.type.resource, 'events')
})

test('the factory types informers and their stores from the resource type', () => {
  const factory = new InformerFactory(client)
  const pods = factory.informer({ type: CORE_TYPES.pods, namespace: 'ns' })
  typeIs(true as Equal<typeof pods, SharedInformer<Pod>>)
  typeIs(true as Equal<ReturnType<typeof pods.store.get>, Pod | undefined>)
  const leases = factory.multiNamespaceInformer({ type: CORE_TYPES.leases }, ['a', 'b'])
  typeIs(true as Equal<ReturnType<typeof leases.store.get>, Lease | undefined>)
  const explicit = factory.informer<KubeEvent>({ type: CORE_TYPES.events })
  typeIs(true as Equal<typeof explicit, SharedInformer<KubeEvent>>)
  assert.equal(factory.informers.length, 4) // pods, leases in a and b, events
})

test('the object type is type-only: no CORE_TYPES entry carries it', () => {
  for (const [name, type] of Object.entries(CORE_TYPES)) {
    assert.ok(!('objectType' in type), `${name} carries objectType`)
    assert.deepEqual(Object.keys(type).sort(), ['group', 'kind', 'namespaced', 'resource', 'version'], name)
  }
})

test('APPSERVICES and NODECONFIGS give typed clients and informers without type arguments or casts', () => {
  const apps = client.resource(APPSERVICES, 'ns')
  typeIs(true as Equal<typeof apps, ResourceClient<AppService>>)
  const configs = client.resource(NODECONFIGS)
  typeIs(true as Equal<typeof configs, ResourceClient<NodeConfig>>)
  const factory = new InformerFactory(client)
  const informer = factory.informer({ type: NODECONFIGS })
  typeIs(true as Equal<ReturnType<typeof informer.store.get>, NodeConfig | undefined>)
  const many = factory.multiNamespaceInformer({ type: APPSERVICES }, ['a', 'b'])
  typeIs(true as Equal<ReturnType<typeof many.store.get>, AppService | undefined>)
  for (const type of [APPSERVICES, NODECONFIGS])
    assert.deepEqual(Object.keys(type).sort(), ['group', 'kind', 'namespaced', 'resource', 'version'])
})
