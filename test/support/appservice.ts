/**
 * @module appservice — shared steps for AppService integration and e2e tests.
 */
import type { CustomResourceDefinition } from '../../src/api/index.ts'
import { InformerFactory, type InformerSpec } from '../../src/cache/factory.ts'
import type { InformerOptions } from '../../src/cache/informer.ts'
import type { MultiNamespaceInformer } from '../../src/cache/multi-namespace-informer.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import { DEPLOYMENT_V1, SERVICE_V1 } from '../../src/codec/protobuf/kinds.generated.ts'
import type { Controller } from '../../src/controller/controller.ts'
import type { Condition, KubeObject } from '../../src/core/types.ts'
import { EventRecorder } from '../../src/objects/events.ts'
import { type AppService, appServiceCrd } from '../../src/operators/appservice/api.ts'
import {
  type AppServiceOperatorOptions,
  appServiceController,
} from '../../src/operators/appservice/operator.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { adminClient } from './kube.ts'
import type { TestEnvSuite } from './test-env.ts'

/**
 * What every AppService suite starts from: an admin client with the CRD installed, the database
 * stand-in, and a fresh namespace named from `prefix`; the client and the stand-in closed by `defer`.
 */
export async function appServiceSetup(
  { env, defer }: Pick<TestEnvSuite, 'env' | 'defer'>,
  prefix: string,
): Promise<{ client: KubeClient; db: DatabaseStandin; ns: string }> {
  const client = adminClient(env(), env().server)
  await installAppServiceCrd(client)
  const db = await startDatabaseStandin()
  defer(
    () => client.close(),
    () => db.close(),
  )
  return { client, db, ns: await env().createNamespace(prefix) }
}

/**
 * Installs (or updates) the AppService CRD with server-side apply and waits until it is Established.
 * Without conversion (v1alpha1 alone, as `webhooks.enabled=false` does for admission): no operator pod
 * serves the webhook Service on the shared control plane, and the apiserver, the garbage collector and
 * the namespace controller would call it for v1beta1, the preferred version. test/integration/
 * conversion.test.ts serves both versions, in a group of its own.
 */
export async function installAppServiceCrd(client: KubeClient): Promise<void> {
  const crd = appServiceCrd({ conversion: false }) as unknown as CustomResourceDefinition
  const crds = client.resource(CORE_TYPES.customResourceDefinitions)
  await crds.apply(crd, { fieldManager: 'edgeop-tests', force: true })
  await eventually(
    async () => {
      const c = await crds.get(crd.metadata.name!)
      return ((c.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some(
        (x) => x.type === 'Established' && x.status === 'True',
      )
    },
    { timeoutMs: 30_000, what: 'AppService CRD established' },
  )
  await eventually(
    async () =>
      (await client.mapper
        .mapping({ group: 'platform.example.com', kind: 'AppService' })
        .catch(() => undefined)) !== undefined,
    { timeoutMs: 30_000, what: 'AppService discoverable' },
  )
}

/** Creates `count` AppServices `a0`…, 50 at a time (as the benchmarks do), with `spec` (default: nginx, replicas 0: the operator's own work). */
export async function createAppServices(
  apps: ResourceClient<AppService>,
  count: number,
  spec: Partial<AppService['spec']> = { image: 'nginx:1.27', replicas: 0 },
): Promise<void> {
  for (let i = 0; i < count; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        apps.create({ metadata: { name: `a${i + j}` }, spec } as AppService),
      ),
    )
}

/** The condition of `type` on an AppService, if any. */
export function condition(a: AppService | undefined, type: string): Condition | undefined {
  return a?.status?.conditions?.find((c) => c.type === type)
}

/** Polls an AppService until `pred` holds; the failure message shows its last status. */
export async function appServiceWhere(
  apps: ResourceClient<AppService>,
  name: string,
  pred: (a: AppService) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<AppService> {
  let last: AppService | undefined
  await eventually(
    async () => {
      last = await apps.get(name).catch(() => undefined)
      return last !== undefined && pred(last)
    },
    { timeoutMs, what: () => `${what} (last status: ${JSON.stringify(last?.status)})` },
  )
  return last!
}

/** Polls until the AppService `name` is gone (its finalizer removed after cleanup). */
export async function appServiceGone(
  apps: ResourceClient<AppService>,
  name: string,
  timeoutMs = 90_000,
): Promise<void> {
  await eventually(async () => (await apps.get(name).catch(() => undefined)) === undefined, {
    timeoutMs,
    what: `${name} deleted after cleanup`,
  })
}

/**
 * Set to `protobuf` (test/integration/appservice-protobuf.test.ts does) to run the controller suite with its
 * Deployments and Services listed and watched in protobuf and kept in compact stores (the factory's default for
 * types that carry a protobuf kind). The operator itself names no protobuf kind (its artifact carries no
 * decoder), so the test's factory gives its child types their kinds.
 */
export const CHILD_WIRE_ENV = 'EDGEOP_TEST_CHILD_WIRE'

/** An informer factory that reads Deployments and Services in protobuf, into compact stores. */
class ProtobufChildrenFactory extends InformerFactory {
  override multiNamespaceInformer<T extends KubeObject = KubeObject>(
    spec: InformerSpec<T> | InformerSpec,
    namespaces: readonly string[],
    options: InformerOptions<T> = {},
  ): MultiNamespaceInformer<T> {
    const protobuf =
      spec.type === CORE_TYPES.deployments
        ? DEPLOYMENT_V1
        : spec.type === CORE_TYPES.services
          ? SERVICE_V1
          : undefined
    const type = protobuf ? { ...spec.type, protobuf } : spec.type
    // The operator names the eager store for its children; this run keeps them compact, as protobuf types get.
    return super.multiNamespaceInformer<T>({ ...spec, type } as InformerSpec<T>, namespaces, {
      ...options,
      ...(protobuf ? { store: 'compact' } : {}),
    })
  }
}

/**
 * Runs the AppService controller in this process for a test file: an informer factory on `client`,
 * an event recorder, the controller built from `options` (namespaces, database, breaker, retry
 * policy, …), `beforeStart(controller)` (e.g. to count what the workers take from the queue), then
 * the informers synced and the workers running. The returned `stop` aborts them, waits for the
 * workers and informers, and flushes the events: pass it to the file's `defer`.
 */
export async function runAppServiceController(
  client: KubeClient,
  options: Omit<AppServiceOperatorOptions, 'client' | 'factory' | 'recorder'>,
  beforeStart?: (controller: Controller<AppService>) => void,
): Promise<{ controller: Controller<AppService>; stop: () => Promise<void> }> {
  const protobuf = process.env[CHILD_WIRE_ENV] === 'protobuf'
  const factory = protobuf ? new ProtobufChildrenFactory(client) : new InformerFactory(client)
  const recorder = new EventRecorder(client, {
    controller: 'platform.example.com/appservice',
    instance: 'test',
  })
  const controller = appServiceController({ client, factory, recorder, ...options })
  if (protobuf && factory.types.filter((t) => t.protobuf !== undefined).length !== 2) {
    throw new Error('the protobuf run did not give the Deployment and Service informers their protobuf kinds')
  }
  beforeStart?.(controller)
  const ac = new AbortController()
  factory.start(ac.signal)
  await factory.waitForSync(30_000)
  const running = controller.run(ac.signal)
  return {
    controller,
    stop: async () => {
      ac.abort()
      await running
      await factory.stopped()
      await recorder.flush()
    },
  }
}
