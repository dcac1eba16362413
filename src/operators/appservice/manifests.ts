/**
 * @module manifests — everything a cluster admin applies to run the AppService operator.
 *
 * Generated here and printed by `edgeop manifests`; deploy/*.yaml are these objects
 * (a test keeps them equal). RBAC is least privilege: only the verbs the operator
 * uses, Lease access only in its own namespace. Resource requests and limits come
 * from measurements (README, "Numbers").
 */
import type { KubeObject } from '../../core/index.ts'
import { appServiceCrd, GROUP } from './api.ts'

/** Namespace the operator runs in. */
export const OPERATOR_NAMESPACE = 'edgeop-system'
/** Name of its Deployment, ServiceAccount, roles and Lease. */
export const OPERATOR_NAME = 'edgeop-appservice'
/** Ports: metrics and probes (controller-runtime's conventional 8080/8081). */
export const METRICS_PORT = 8080
export const PROBE_PORT = 8081

/** The ClusterRole rules: what the reconciler actually calls. */
export function operatorRules() {
  return [
    { apiGroups: [GROUP], resources: ['appservices'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [GROUP], resources: ['appservices/status'], verbs: ['patch'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ]
}

/** The Role rules in the operator's own namespace: leader election. */
export function leaseRules() {
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }]
}

const labels = { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/part-of': 'edgeop' }

/** The operator's manifests, in apply order, by file name. */
export function operatorManifests(image = 'ghcr.io/example/edgeop:0.1.0'): Record<string, KubeObject[]> {
  const meta = (name: string, namespaced = true) => ({
    name,
    ...(namespaced ? { namespace: OPERATOR_NAMESPACE } : {}),
    labels,
  })
  return {
    'namespace.yaml': [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE, labels } },
    ],
    'crd.yaml': [appServiceCrd() as unknown as KubeObject],
    'rbac.yaml': [
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: meta(OPERATOR_NAME),
        automountServiceAccountToken: true,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: meta(OPERATOR_NAME, false),
        rules: operatorRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: meta(OPERATOR_NAME, false),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: OPERATOR_NAME },
        subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta(`${OPERATOR_NAME}-leader-election`),
        rules: leaseRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(`${OPERATOR_NAME}-leader-election`),
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'Role',
          name: `${OPERATOR_NAME}-leader-election`,
        },
        subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
      },
    ],
    'deployment.yaml': [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(OPERATOR_NAME),
        spec: {
          replicas: 2,
          selector: { matchLabels: { 'app.kubernetes.io/name': OPERATOR_NAME } },
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: OPERATOR_NAME,
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 65532,
                runAsGroup: 65532,
                seccompProfile: { type: 'RuntimeDefault' },
              },
              containers: [
                {
                  name: 'operator',
                  image,
                  args: [
                    'run',
                    '--leader-elect',
                    `--leader-election-id=${OPERATOR_NAME}`,
                    `--leader-election-namespace=${OPERATOR_NAMESPACE}`,
                    `--metrics-bind-address=:${METRICS_PORT}`,
                    `--health-probe-bind-address=:${PROBE_PORT}`,
                    '--database-api=http://database-api.edgeop-system.svc:8080',
                  ],
                  ports: [
                    { name: 'metrics', containerPort: METRICS_PORT },
                    { name: 'probes', containerPort: PROBE_PORT },
                  ],
                  livenessProbe: {
                    httpGet: { path: '/healthz', port: 'probes' },
                    periodSeconds: 10,
                    failureThreshold: 3,
                  },
                  readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 5 },
                  // Measured (README, Numbers): 72 MiB idle with nothing cached, 235 MiB with 1,000
                  // AppServices and their Deployments and Services cached; the limit leaves headroom.
                  resources: { requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '384Mi' } },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ['ALL'] },
                  },
                },
              ],
            },
          },
        },
      },
    ],
    'networkpolicy.yaml': [
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: meta(`${OPERATOR_NAME}-metrics`),
        spec: {
          podSelector: { matchLabels: { 'app.kubernetes.io/name': OPERATOR_NAME } },
          policyTypes: ['Ingress'],
          ingress: [
            {
              from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
              ports: [{ port: METRICS_PORT, protocol: 'TCP' }],
            },
            // Probes come from the kubelet on the node.
            { ports: [{ port: PROBE_PORT, protocol: 'TCP' }] },
          ],
        },
      },
    ],
  }
}
