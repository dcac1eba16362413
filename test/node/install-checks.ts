/**
 * @module install-checks — what every install of the operator on the real node must show, whichever
 * way it was installed (the chart with `helm install`, config/default with kustomize): its pods
 * Running and Ready by kubelet's probes with one leader, an AppService reconciled into pods that
 * run, and a webhook denial through the webhook Service. Each check prints its finding (`e2e:`).
 */
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import {
  APP_IMAGE,
  APP_NAMESPACE,
  at,
  DEPLOYMENTS,
  LEASES,
  type Pod,
  pods,
  ready,
  refusal,
  say,
  WAIT_MS,
} from './node-cluster.ts'

/** One install of the operator: where its pods are and how they are told apart. */
export interface OperatorInstall {
  /** Its namespace. */
  namespace: string
  /** Its Deployment, which is also the Lease's name (`--leader-election-id`). */
  deployment: string
  /** The label selector of its pods. */
  selector: string
  /** How many replicas it runs. */
  replicas: number
}

/** The chart installed as release `edgeop` in `edgeop-system` (its pods carry the release's instance label). */
export const CHART_DEFAULTS: OperatorInstall = {
  namespace: 'edgeop-system',
  deployment: 'edgeop-appservice',
  selector: 'app.kubernetes.io/name=edgeop-appservice,app.kubernetes.io/instance=edgeop',
  replicas: 2,
}

/** The install's pods, once all `replicas` are Running and Ready; then the Lease held by one of them. */
export async function operatorRunning(client: KubeClient, install: OperatorInstall): Promise<Pod[]> {
  let last: Pod[] = []
  await eventually(
    async () => {
      last = await pods(client, install.namespace, install.selector)
      return last.length === install.replicas && last.every((p) => p.status?.phase === 'Running' && ready(p))
    },
    {
      timeoutMs: WAIT_MS,
      what: () =>
        `${install.replicas} operator pods Running and Ready (${JSON.stringify(last.map((p) => p.status))})`,
    },
  )
  say('operator pods', {
    at: at(),
    pods: last.map((p) => ({
      name: p.metadata.name,
      phase: p.status?.phase,
      ready: ready(p),
      ip: p.status?.podIP,
    })),
  })
  const lease = await eventually(
    async () => {
      const l = (await client.resource(LEASES, install.namespace).list()).items as (KubeObject & {
        spec?: { holderIdentity?: string }
      })[]
      return l.find((x) => x.spec?.holderIdentity)
    },
    { timeoutMs: WAIT_MS, what: 'a leader' },
  )
  say('leader', {
    lease: lease.metadata.name,
    holder: lease.spec?.holderIdentity,
    pods: last.map((p) => p.metadata.name),
  })
  return last
}

/** AppService `hello` (2 replicas of the pause image) reconciled into a Deployment whose pods run on the node. */
export async function appServiceRuns(client: KubeClient): Promise<Pod[]> {
  await client
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP_NAMESPACE } })
  await client.resource(APPSERVICES, APP_NAMESPACE).create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'hello' },
    spec: { image: APP_IMAGE, replicas: 2, port: 8080 },
  } as never)
  let appPods: Pod[] = []
  await eventually(
    async () => {
      appPods = await pods(client, APP_NAMESPACE, '')
      return appPods.length === 2 && appPods.every((p) => p.status?.phase === 'Running')
    },
    {
      timeoutMs: WAIT_MS,
      what: () =>
        `the AppService's two pods Running (${JSON.stringify(appPods.map((p) => p.status?.phase))})`,
    },
  )
  const deployment = await client.resource(DEPLOYMENTS, APP_NAMESPACE).get('hello')
  say('appservice pods', {
    at: at(),
    deployment: deployment.metadata.name,
    pods: appPods.map((p) => ({ name: p.metadata.name, phase: p.status?.phase, ip: p.status?.podIP })),
  })
  return appPods
}

/** An invalid AppService refused by the validating webhook, reached through its Service (aggregator routing: an endpoint). */
export async function webhookDenial(client: KubeClient): Promise<void> {
  const denied = await refusal(
    client.resource(APPSERVICES, APP_NAMESPACE).create({
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'AppService',
      metadata: { name: 'bad' },
      spec: { image: 'Not An/Image!' },
    } as never),
  )
  say('webhook denial', denied)
}
