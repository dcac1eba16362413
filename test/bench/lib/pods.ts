/**
 * @module pods — realistic Pods for the benchmarks, created through the API so that the
 * apiserver writes defaults and `managedFields` as it does in a real cluster.
 *
 * Each Pod looks like a Deployment's: owned by a ReplicaSet, one container (plus a sidecar on
 * every 8th), env, probes, resources, the projected service-account token volume, the default
 * tolerations, `spec.nodeName` set to a fake node (no scheduler or kubelet runs: nothing acts
 * on them), and a full Running status. Three writers leave three `managedFields` entries, as
 * in a real cluster: `kube-controller-manager` creates it, `kube-scheduler` and `kubelet`
 * patch the status subresource. About 6–7 KB of JSON per Pod, like edge-facts §2.3's sample.
 */

import type { Container, Pod } from '../../../src/api/index.ts'
import type { KubeClient } from '../../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../../src/client/resource.ts'
import type { KubeObject } from '../../../src/core/types.ts'

const APPS = ['web', 'api', 'worker', 'cache', 'gateway', 'metrics', 'auth', 'search'] as const

/** A stable pseudo-random hex string for `i` (no Math.random: runs are repeatable). */
function hex(i: number, salt: number, len: number): string {
  let x = (i + 1) * 2654435761 + salt * 40503
  let s = ''
  while (s.length < len) {
    x = (x ^ (x >>> 13)) * 1274126177
    x = (x ^ (x >>> 16)) >>> 0
    s += x.toString(16).padStart(8, '0')
  }
  return s.slice(0, len)
}

const ALNUM = 'bcdfghjklmnpqrstvwxz2456789'
function suffix(i: number): string {
  let n = i * 7919 + 104729
  let s = ''
  for (let k = 0; k < 5; k++) {
    s += ALNUM[n % ALNUM.length]
    n = Math.floor(n / ALNUM.length) + k * 31
  }
  return s
}

function uid(i: number, salt: number): string {
  const h = hex(i, salt, 32)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

function container(app: string, i: number, sidecar: boolean): Container {
  if (sidecar) {
    return {
      name: 'log-shipper',
      image: 'registry.example.com/platform/log-shipper:2.14.1',
      imagePullPolicy: 'IfNotPresent',
      args: ['--input=/var/log/app', '--output=http://logs.platform.svc:9880', '--buffer=8Mi'],
      resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '64Mi' } },
      volumeMounts: [{ name: 'app-logs', mountPath: '/var/log/app', readOnly: true }],
    }
  }
  return {
    name: app,
    image: `registry.example.com/shop/${app}:1.${i % 40}.${i % 7}`,
    imagePullPolicy: 'IfNotPresent',
    ports: [
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ],
    env: [
      { name: 'APP_NAME', value: app },
      { name: 'APP_ENV', value: 'production' },
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'DB_HOST', value: `${app}-db.shop.svc.cluster.local` },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    livenessProbe: {
      httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
      initialDelaySeconds: 10,
      periodSeconds: 10,
    },
    readinessProbe: { httpGet: { path: '/readyz', port: 'http', scheme: 'HTTP' }, periodSeconds: 5 },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app', readOnly: true },
      { name: 'app-logs', mountPath: '/var/log/app' },
      {
        name: 'kube-api-access',
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
      },
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
  }
}

/** The Pod as its ReplicaSet controller would create it. */
export function podSpec(namespace: string, i: number): Pod {
  const app = APPS[i % APPS.length] as string
  const hash = hex(i % 50, 1, 10)
  const sidecar = i % 8 === 0
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${hash}-${suffix(i)}-${i}`,
      namespace,
      labels: { app, 'pod-template-hash': hash, tier: i % 3 === 0 ? 'frontend' : 'backend', team: 'shop' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-01T08:00:00Z' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: uid(i % 50, 2),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: `edge-node-${i % 20}`,
      serviceAccountName: 'default',
      containers: [container(app, i, false), ...(sidecar ? [container(app, i, true)] : [])],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: 'app-logs', emptyDir: {} },
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
          },
        },
      ],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
  }
}

const T = '2026-11-01T08:00:0'

/** The status patch of the scheduler (PodScheduled). */
function schedulerStatus(): unknown {
  return { status: { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: `${T}1Z` }] } }
}

/** The status patch of the kubelet: Running, ready, with container statuses. */
function kubeletStatus(pod: KubeObject, i: number): unknown {
  const spec = pod.spec as { containers: { name: string; image: string }[] }
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
  return {
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: `${T}3Z` },
        { type: 'Initialized', status: 'True', lastTransitionTime: `${T}1Z` },
        { type: 'Ready', status: 'True', lastTransitionTime: `${T}9Z` },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: `${T}9Z` },
      ],
      hostIP: `192.168.${i % 20}.10`,
      hostIPs: [{ ip: `192.168.${i % 20}.10` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: `${T}1Z`,
      qosClass: 'Burstable',
      containerStatuses: spec.containers.map((c, k) => ({
        name: c.name,
        image: c.image,
        imageID: `${c.image.split(':')[0]}@sha256:${hex(i + k, 3, 64)}`,
        containerID: `containerd://${hex(i + k, 4, 64)}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: `${T}4Z` } },
        lastState: {},
        volumeMounts: [
          {
            name: 'kube-api-access',
            mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            readOnly: true,
            recursiveReadOnly: 'Disabled',
          },
        ],
      })),
    },
  }
}

/** Creates the Pods with these indices in `namespace` as the three writers would, `concurrency` at a time. */
export async function seedPods(
  client: KubeClient,
  namespace: string,
  indices: readonly number[],
  options: { concurrency?: number; onProgress?: (done: number) => void } = {},
): Promise<void> {
  const pods = client.resource(CORE_TYPES.pods, namespace)
  let next = 0
  let done = 0
  const one = async (i: number): Promise<void> => {
    const pod = podSpec(namespace, i)
    const name = pod.metadata.name as string
    await pods.create(pod, { fieldManager: 'kube-controller-manager' })
    await pods.patch(name, schedulerStatus(), 'strategic', {
      fieldManager: 'kube-scheduler',
      subresource: 'status',
    })
    await pods.patch(name, kubeletStatus(pod, i), 'strategic', {
      fieldManager: 'kubelet',
      subresource: 'status',
    })
  }
  const worker = async (): Promise<void> => {
    while (next < indices.length) {
      await one(indices[next++] as number)
      if (++done % 1000 === 0) options.onProgress?.(done)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker))
}

/** The index a generated Pod's name ends with. */
export function podIndex(name: string): number {
  return Number(name.slice(name.lastIndexOf('-') + 1))
}
