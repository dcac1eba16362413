/**
 * @module operator-install — the appservice operator installed into the real apiserver the two
 * ways a cluster admin installs it (deploy/'s YAML applied, or `helm install` of charts/edgeop),
 * and what a test then reads back from what was installed: the namespace, the ServiceAccount, the
 * Lease, the metrics-reader ClusterRole and the container's args. Only the Deployment's pods
 * cannot run (no kubelet): a test starts the built artifact with those args instead.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import type { TestEnv } from '../controlplane/env.ts'
import { applyObjects, deployObjects } from './deploy-manifests.ts'
import { CHART, helm, one, parseObjects } from './rendered-manifests.ts'
import type { Cleanup } from './test-env.ts'

/** Leader-election timings in milliseconds. */
export interface LeaseTimings {
  duration: number
  renew: number
  retry: number
}

/** What a test asks of an installation. */
export interface InstallRequest {
  env: TestEnv
  admin: KubeClient
  defer(...cleanups: Cleanup[]): void
  /** The one namespace the operator watches. */
  watchNamespace: string
  /** The Lease timings the test's failover assertions are written for. */
  lease: LeaseTimings
  /** Further `edgeop run` flags (e.g. `--database-api=…`). */
  extraArgs: string[]
}

/** The operator as installed, read back from the installed objects. */
export interface InstalledOperator {
  /** The namespace of the operator's Deployment, ServiceAccount and Lease. */
  namespace: string
  serviceAccount: string
  /** The Lease's name (the container's `--leader-election-id`). */
  leaseName: string
  /** The ClusterRole a scraper is bound to for reading /metrics. */
  metricsReaderRole: string
  /** The container's args less the bind addresses (a test binds ephemeral loopback ports). */
  args: string[]
}

/** A way of installing the operator; its cleanups go to `request.defer`. */
export type OperatorInstaller = (request: InstallRequest) => Promise<InstalledOperator>

type PodTemplate = { spec: { serviceAccountName: string; containers: { args: string[] }[] } }

/** Reads {@link InstalledOperator} from the installed objects (the Deployment `*-appservice` and the RBAC). */
function readInstalled(objects: readonly KubeObject[], deployment: KubeObject): InstalledOperator {
  const pod = (deployment.spec as { template: PodTemplate }).template.spec
  const args = pod.containers[0]!.args.filter(
    (a) => !/^--(metrics|health-probe|webhook)-bind-address=/.test(a),
  )
  const leaseName = args.find((a) => a.startsWith('--leader-election-id='))?.split('=')[1]
  if (leaseName === undefined) throw new Error(`no --leader-election-id in ${args.join(' ')}`)
  return {
    namespace: deployment.metadata.namespace!,
    serviceAccount: pod.serviceAccountName,
    leaseName,
    metricsReaderRole: one([...objects], 'ClusterRole', '-metrics-reader').metadata.name!,
    args,
  }
}

const leaseFlags = (lease: LeaseTimings) => [
  `--leader-election-lease-duration=${lease.duration}ms`,
  `--leader-election-renew-deadline=${lease.renew}ms`,
  `--leader-election-retry-period=${lease.retry}ms`,
]

/** `args` with every flag named in `overrides` replaced by the override. */
function overriding(args: readonly string[], overrides: readonly string[]): string[] {
  const names = new Set(overrides.map((o) => o.split('=')[0]))
  return [...args.filter((a) => !names.has(a.split('=')[0])), ...overrides]
}

/**
 * deploy/'s Namespace and RBAC applied unchanged (server-side apply, as `kubectl apply -f`); the
 * args are deploy/deployment.yaml's container's, with a Lease name of this run's own (in deploy/'s
 * namespace, where its Role allows Leases) and the requested timings, namespace and extra flags.
 */
export const installFromDeploy: OperatorInstaller = async (request) => {
  const objects = [...(await deployObjects('00-namespace.yaml')), ...(await deployObjects('rbac.yaml'))]
  await applyObjects(request.admin, objects)
  const deployment = one(await deployObjects('deployment.yaml'), 'Deployment', '-appservice')
  const shipped = readInstalled(objects, deployment)
  const leaseName = `appservice-e2e-${randomBytes(3).toString('hex')}`
  return {
    ...shipped,
    leaseName,
    args: overriding(shipped.args, [
      `--namespace=${request.watchNamespace}`,
      `--leader-election-id=${leaseName}`,
      ...leaseFlags(request.lease),
      ...request.extraArgs,
    ]),
  }
}

/**
 * `helm install` of charts/edgeop (release of this run's own, in a namespace of its own) with
 * values carrying the requested Lease timings, `watchNamespaces` and `extraArgs`; everything is
 * then read from `helm get manifest`. The release is uninstalled by a deferred cleanup.
 */
export const installWithHelm: OperatorInstaller = async (request) => {
  const { env, defer } = request
  const namespace = await env.createNamespace('helm-op')
  const release = `e2e${randomBytes(3).toString('hex')}`
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-e2e-values-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  // A values file rather than --set: flag values hold '=', ',' and ':'. JSON is YAML.
  const values = join(dir, 'values.yaml')
  await writeFile(
    values,
    JSON.stringify({
      leaderElection: {
        id: `${release}-lease`,
        leaseDuration: `${request.lease.duration}ms`,
        renewDeadline: `${request.lease.renew}ms`,
        retryPeriod: `${request.lease.retry}ms`,
      },
      watchNamespaces: [request.watchNamespace],
      extraArgs: request.extraArgs,
      // No kubelet runs the pods: a Fail webhook without endpoints would refuse every AppService
      // write of the other tests sharing this control plane.
      webhooks: { enabled: false },
    }),
  )
  const kubeEnv = { KUBECONFIG: env.kubeconfig }
  // --skip-crds: the shared CRD (installAppServiceCrd) stays without conversion; crds/'s calls the
  // webhook Service no pod serves here (manifests-equivalence.test.ts checks crds/ against deploy/).
  const out = await helm(
    ['install', release, CHART, '--namespace', namespace, '--skip-crds', '-f', values],
    kubeEnv,
  )
  if (!/STATUS: deployed/.test(out)) throw new Error(`helm install: not deployed: ${out.slice(0, 500)}`)
  defer(() => helm(['uninstall', release, '--namespace', namespace], kubeEnv))
  const installed = parseObjects(await helm(['get', 'manifest', release, '--namespace', namespace], kubeEnv))
  return readInstalled(installed, one(installed, 'Deployment', '-appservice'))
}
