/**
 * @module appservice — shared steps for AppService integration and e2e tests.
 */
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { appServiceCrd } from '../../src/operators/appservice/api.ts'
import { eventually } from './informers.ts'

/** Installs (or updates) the AppService CRD with server-side apply and waits until it is Established. */
export async function installAppServiceCrd(client: KubeClient): Promise<void> {
  const crd = appServiceCrd() as unknown as KubeObject
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
