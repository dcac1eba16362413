/**
 * @module appservice — shared steps for AppService integration and e2e tests.
 */
import type { CustomResourceDefinition } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import type { Condition } from '../../src/core/types.ts'
import { type AppService, appServiceCrd } from '../../src/operators/appservice/api.ts'
import { eventually } from './eventually.ts'

/** Installs (or updates) the AppService CRD with server-side apply and waits until it is Established. */
export async function installAppServiceCrd(client: KubeClient): Promise<void> {
  const crd = appServiceCrd() as unknown as CustomResourceDefinition
  const crds = client.resource(CORE_TYPES.customResourceDefinitions)
  await crds.apply(crd, { fieldManager: 'edgeop-tests', force: true })
  await eventually(
    async () => {
      const c = await crds.get(crd.metadata.name!)
      return ((c.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some(
        (x) => x.type === 'Established' && x.status === 'True',
      )
    },
    30_000,
    'AppService CRD established',
  )
  await eventually(
    async () =>
      (await client.mapper
        .mapping({ group: 'platform.example.com', kind: 'AppService' })
        .catch(() => undefined)) !== undefined,
    30_000,
    'AppService discoverable',
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
    timeoutMs,
    `${what} (last status: ${JSON.stringify(last?.status)})`,
  )
  return last!
}

/** Polls until the AppService `name` is gone (its finalizer removed after cleanup). */
export async function appServiceGone(
  apps: ResourceClient<AppService>,
  name: string,
  timeoutMs = 90_000,
): Promise<void> {
  await eventually(
    async () => (await apps.get(name).catch(() => undefined)) === undefined,
    timeoutMs,
    `${name} deleted after cleanup`,
  )
}
