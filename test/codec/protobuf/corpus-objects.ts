/**
 * @module corpus-objects — the objects the protobuf corpus is recorded from: one or two of every kind the
 * generated table covers, using as many field shapes as we could (pointers at zero, int-or-strings of both
 * kinds, quantities, micro-times, maps of bytes, embedded volume sources and probe handlers, empty structs).
 * Shared by the recorder (record-corpus.ts) and the live differential test (test/integration/protobuf-decoders.test.ts).
 */

/** A fresh namespace for the corpus (a namespace is only gone once kube-controller-manager has emptied it). */
export function corpusNamespace(): string {
  return `protobuf-corpus-${Math.random().toString(16).slice(2, 10)}`
}

/** A kind of the corpus: its collection path (`{ns}` for the namespace), and the corpus file stem. */
export interface CorpusKind {
  readonly file: string
  readonly collection: string
  /** The table constant (src/codec/protobuf/kinds.generated.ts) of its items. */
  readonly schema: string
  readonly clusterScoped?: boolean
  /** For cluster-scoped kinds: the label selector that picks the corpus's objects. */
  readonly selector?: string
}

export const CORPUS_KINDS: readonly CorpusKind[] = [
  {
    file: 'namespaces',
    collection: '/api/v1/namespaces',
    schema: 'NAMESPACE_V1',
    clusterScoped: true,
    selector: 'corpus=protobuf',
  },
  {
    file: 'nodes',
    collection: '/api/v1/nodes',
    schema: 'NODE_V1',
    clusterScoped: true,
    selector: 'corpus=protobuf',
  },
  { file: 'configmaps', collection: '/api/v1/namespaces/{ns}/configmaps', schema: 'CONFIG_MAP_V1' },
  { file: 'secrets', collection: '/api/v1/namespaces/{ns}/secrets', schema: 'SECRET_V1' },
  { file: 'services', collection: '/api/v1/namespaces/{ns}/services', schema: 'SERVICE_V1' },
  {
    file: 'serviceaccounts',
    collection: '/api/v1/namespaces/{ns}/serviceaccounts',
    schema: 'SERVICE_ACCOUNT_V1',
  },
  { file: 'pods', collection: '/api/v1/namespaces/{ns}/pods', schema: 'POD_V1' },
  {
    file: 'pvcs',
    collection: '/api/v1/namespaces/{ns}/persistentvolumeclaims',
    schema: 'PERSISTENT_VOLUME_CLAIM_V1',
  },
  { file: 'events.core', collection: '/api/v1/namespaces/{ns}/events', schema: 'EVENT_CORE_V1' },
  { file: 'deployments', collection: '/apis/apps/v1/namespaces/{ns}/deployments', schema: 'DEPLOYMENT_V1' },
  { file: 'replicasets', collection: '/apis/apps/v1/namespaces/{ns}/replicasets', schema: 'REPLICA_SET_V1' },
  {
    file: 'statefulsets',
    collection: '/apis/apps/v1/namespaces/{ns}/statefulsets',
    schema: 'STATEFUL_SET_V1',
  },
  { file: 'daemonsets', collection: '/apis/apps/v1/namespaces/{ns}/daemonsets', schema: 'DAEMON_SET_V1' },
  { file: 'jobs', collection: '/apis/batch/v1/namespaces/{ns}/jobs', schema: 'JOB_V1' },
  { file: 'cronjobs', collection: '/apis/batch/v1/namespaces/{ns}/cronjobs', schema: 'CRON_JOB_V1' },
  { file: 'leases', collection: '/apis/coordination.k8s.io/v1/namespaces/{ns}/leases', schema: 'LEASE_V1' },
  { file: 'events', collection: '/apis/events.k8s.io/v1/namespaces/{ns}/events', schema: 'EVENT_V1' },
  {
    file: 'endpointslices',
    collection: '/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices',
    schema: 'ENDPOINT_SLICE_V1',
  },
  {
    file: 'ingresses',
    collection: '/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses',
    schema: 'INGRESS_V1',
  },
]

const labels = { app: 'corpus', 'example.com/tier': 'backend' }

/** A rich pod spec: many volume sources (embedded in Volume), probes (embedded handlers), quantities, env sources. */
function podSpec(): Record<string, unknown> {
  return {
    terminationGracePeriodSeconds: 30,
    serviceAccountName: 'runner',
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 65532,
      fsGroup: 0,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    tolerations: [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      { key: 'edge', operator: 'Equal', value: 'true' },
    ],
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 10,
            preference: {
              matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }],
            },
          },
        ],
      },
    },
    volumes: [
      {
        name: 'config',
        configMap: {
          name: 'app-config',
          defaultMode: 420,
          optional: true,
          items: [{ key: 'a', path: 'a.txt' }],
        },
      },
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      { name: 'creds', secret: { secretName: 'app-secret', defaultMode: 256 } },
      { name: 'host', hostPath: { path: '/var/lib/edgeop', type: 'DirectoryOrCreate' } },
      {
        name: 'projected',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3600, audience: 'edgeop' } },
            { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          ],
        },
      },
    ],
    initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'true'], resources: {} }],
    containers: [
      {
        name: 'app',
        image: 'registry.example.com/app:1.2.3',
        args: ['--port=8080', '--verbose'],
        ports: [
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
          { containerPort: 9090, hostPort: 0 },
        ],
        env: [
          { name: 'PLAIN', value: 'text with ünïcödé ✓' },
          { name: 'EMPTY', value: '' },
          { name: 'FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          {
            name: 'FROM_LIMIT',
            valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } },
          },
        ],
        resources: {
          requests: { cpu: '100m', memory: '96Mi', 'ephemeral-storage': '1Gi' },
          limits: { cpu: '1.5', memory: '384Mi' },
        },
        readinessProbe: {
          httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' },
          periodSeconds: 5,
          failureThreshold: 3,
        },
        livenessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 10 },
        startupProbe: { exec: { command: ['cat', '/tmp/ok'] }, timeoutSeconds: 2 },
        lifecycle: { preStop: { sleep: { seconds: 5 } } },
        volumeMounts: [
          { name: 'config', mountPath: '/etc/app', readOnly: true },
          { name: 'scratch', mountPath: '/tmp' },
        ],
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
      },
    ],
  }
}

const template = (): Record<string, unknown> => ({ metadata: { labels }, spec: podSpec() })

/** The POSTs that create the corpus (paths already in the corpus namespace). */
export function corpusObjects(ns: string): { path: string; body: Record<string, unknown> }[] {
  const core = `/api/v1/namespaces/${ns}`
  const apps = `/apis/apps/v1/namespaces/${ns}`
  const batch = `/apis/batch/v1/namespaces/${ns}`
  const now = new Date()
  const micro = `${now.toISOString().slice(0, 19)}.123456Z`
  return [
    {
      path: '/api/v1/nodes',
      body: {
        metadata: {
          name: 'protobuf-corpus-node',
          labels: { corpus: 'protobuf', 'kubernetes.io/arch': 'arm64' },
        },
        spec: { taints: [{ key: 'edge', value: 'true', effect: 'NoSchedule' }], unschedulable: false },
      },
    },
    {
      path: `${core}/configmaps`,
      body: {
        metadata: { name: 'app-config', labels, annotations: { note: 'multi\nline' } },
        data: { a: '1', empty: '', 'u.key': 'välue ✓' },
        binaryData: { blob: Buffer.from([0, 1, 2, 254, 255]).toString('base64'), none: '' },
        immutable: false,
      },
    },
    { path: `${core}/configmaps`, body: { metadata: { name: 'bare' } } },
    {
      path: `${core}/secrets`,
      body: {
        metadata: { name: 'app-secret' },
        type: 'Opaque',
        // Obviously fake values: nothing in the corpus is a credential.
        data: { username: Buffer.from('not-a-user').toString('base64'), empty: '' },
      },
    },
    {
      path: `${core}/services`,
      body: {
        metadata: { name: 'web', labels },
        spec: {
          selector: labels,
          ports: [
            { name: 'http', port: 80, targetPort: 'http' },
            { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
          ],
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        },
      },
    },
    {
      path: `${core}/services`,
      body: { metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 5432 }] } },
    },
    {
      path: `${core}/serviceaccounts`,
      body: { metadata: { name: 'runner' }, automountServiceAccountToken: false },
    },
    { path: `${core}/pods`, body: { metadata: { name: 'solo', labels }, spec: podSpec() } },
    {
      path: `${core}/pods`,
      body: {
        metadata: { name: 'tiny', generateName: 'tiny-' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    },
    {
      path: `${core}/persistentvolumeclaims`,
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          volumeMode: 'Filesystem',
        },
      },
    },
    {
      path: `${core}/events`,
      body: {
        metadata: { name: 'core-event' },
        involvedObject: { kind: 'Pod', name: 'solo', namespace: ns, apiVersion: 'v1' },
        reason: 'Tested',
        message: 'a core event',
        type: 'Normal',
        count: 2,
        firstTimestamp: `${now.toISOString().slice(0, 19)}Z`,
        lastTimestamp: `${now.toISOString().slice(0, 19)}Z`,
        source: { component: 'corpus' },
      },
    },
    {
      path: `${apps}/deployments`,
      body: {
        metadata: { name: 'web', labels },
        spec: {
          replicas: 2,
          revisionHistoryLimit: 0,
          selector: { matchLabels: labels },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
          template: template(),
        },
      },
    },
    {
      path: `${apps}/deployments`,
      body: {
        metadata: { name: 'scaled-to-zero' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { x: 'y' } },
          template: {
            metadata: { labels: { x: 'y' } },
            spec: { containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
    },
    {
      path: `${apps}/statefulsets`,
      body: {
        metadata: { name: 'db' },
        spec: {
          serviceName: 'headless',
          replicas: 1,
          selector: { matchLabels: { db: 'x' } },
          template: {
            metadata: { labels: { db: 'x' } },
            spec: { containers: [{ name: 'db', image: 'postgres:17' }] },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: 'pgdata' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
            },
          ],
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
        },
      },
    },
    {
      path: `${apps}/daemonsets`,
      body: {
        metadata: { name: 'agent' },
        spec: {
          selector: { matchLabels: { agent: 'x' } },
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
          template: { metadata: { labels: { agent: 'x' } }, spec: podSpec() },
        },
      },
    },
    {
      path: `${batch}/jobs`,
      body: {
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 0,
          ttlSecondsAfterFinished: 60,
          template: {
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'c', image: 'busybox', command: ['true'] }],
            },
          },
        },
      },
    },
    {
      path: `${batch}/cronjobs`,
      body: {
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 3 * * *',
          timeZone: 'Etc/UTC',
          suspend: true,
          jobTemplate: {
            spec: {
              template: {
                spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          },
        },
      },
    },
    {
      path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
      body: {
        metadata: { name: 'leader' },
        spec: {
          holderIdentity: 'edgeop-1',
          leaseDurationSeconds: 15,
          acquireTime: micro,
          renewTime: micro,
          leaseTransitions: 0,
        },
      },
    },
    {
      path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      body: {
        metadata: { name: 'new-event' },
        eventTime: micro,
        reportingController: 'edgeop.dev/corpus',
        reportingInstance: 'corpus-1',
        action: 'Test',
        reason: 'Recorded',
        regarding: { kind: 'Pod', name: 'solo', namespace: ns },
        note: 'an events.k8s.io event',
        type: 'Warning',
        series: { count: 3, lastObservedTime: micro },
      },
    },
    {
      path: `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      body: {
        metadata: { name: 'manual', labels: { 'kubernetes.io/service-name': 'headless' } },
        addressType: 'IPv4',
        endpoints: [
          {
            addresses: ['10.0.0.1'],
            conditions: { ready: true, serving: true, terminating: false },
            nodeName: 'protobuf-corpus-node',
          },
          { addresses: ['10.0.0.2'], conditions: {} },
        ],
        ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
      },
    },
    {
      path: `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
      body: {
        metadata: { name: 'web' },
        spec: {
          rules: [
            {
              host: 'web.example.com',
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: 'web', port: { number: 80 } } },
                  },
                ],
              },
            },
          ],
        },
      },
    },
  ]
}
