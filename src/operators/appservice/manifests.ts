/**
 * @module manifests — everything a cluster admin applies to run the AppService operator.
 *
 * Generated here and printed by `edgeop manifests`; deploy/*.yaml are these objects
 * (a test keeps them equal). RBAC is least privilege: only the verbs the operator
 * uses, Lease access only in its own namespace. Resource requests and limits come
 * from measurements (README, "Numbers").
 */

import type { KubeObject } from '../../core/index.ts'
import { DEFAULT_RENEW_DEADLINE_MS } from '../../leader/index.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS } from '../../manager/index.ts'
import { appServiceCrd, GROUP } from './api.ts'
import { disruptionBudget } from './disruption-budget.ts'

/** Namespace the operator runs in. */
export const OPERATOR_NAMESPACE = 'edgeop-system'
/** Name of its Deployment, ServiceAccount, roles and Lease. */
export const OPERATOR_NAME = 'edgeop-appservice'
/** Port of the HTTPS `/metrics` endpoint (kubebuilder's `config/default` serves secure metrics on 8443). */
export const METRICS_PORT = 8443
/** Port of the plain-HTTP probes (kubebuilder's `--health-probe-bind-address` default, 8081). */
export const PROBE_PORT = 8081
/** The ClusterRole scrapers are bound to; the node agent's manifests (deploy/agent/) ship the same one. */
export const METRICS_READER_ROLE = 'edgeop-metrics-reader'

/** How long in-flight reconciles may run after SIGTERM (`--shutdown-grace-period`; controller-runtime's 30 s). */
export const DRAIN_GRACE_MS = DEFAULT_SHUTDOWN_GRACE_PERIOD_MS
/** The Lease release's own bound (`--leader-election-renew-deadline`): the release gives up after it. */
export const RELEASE_BOUND_MS = DEFAULT_RENEW_DEADLINE_MS
/**
 * After the release: informers and the metrics/probe servers close and the process exits.
 * Those are local and take milliseconds; 5 s leaves room on a loaded node.
 */
export const STOP_SLACK_MS = 5_000
/**
 * What the release needs beyond the drain: its own bound plus the stop slack. The kubelet's
 * default `terminationGracePeriodSeconds` (30 s) equals the drain alone, so a pod whose drain
 * used its full grace was SIGKILLed before it released the Lease, and the next leader waited
 * out the whole lease duration instead of taking over at once.
 */
export const RELEASE_MARGIN_MS = RELEASE_BOUND_MS + STOP_SLACK_MS
/** The pod's termination grace: drain, then release and exit, before the kubelet's SIGKILL. */
export const TERMINATION_GRACE_PERIOD_SECONDS = Math.ceil((DRAIN_GRACE_MS + RELEASE_MARGIN_MS) / 1000)

/** The ClusterRole rules: what the reconciler actually calls. */
export function operatorRules() {
  return [
    { apiGroups: [GROUP], resources: ['appservices'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [GROUP], resources: ['appservices/status'], verbs: ['patch'] },
    // The owned Deployment and Service carry `blockOwnerDeletion: true`; with the
    // OwnerReferencesPermissionEnforcement admission plugin, setting it needs `update` on the
    // owner's `finalizers` subresource, or their create is Forbidden.
    { apiGroups: [GROUP], resources: ['appservices/finalizers'], verbs: ['update'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ]
}

/**
 * The ClusterRole rules secure metrics need (kubebuilder's `metrics-auth-role`): every scrape's token
 * is checked with a TokenReview and its user with a SubjectAccessReview. Both are cluster-scoped.
 */
export function metricsAuthRules() {
  return [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ]
}

/** What a scraper needs (kubebuilder's `metrics-reader`): GET on the `/metrics` non-resource URL. */
export function metricsReaderRules() {
  return [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]
}

/** The Role rules in the operator's own namespace: leader election (`list`: a `--shard` replica's pass lists its ring's membership Leases). */
export function leaseRules() {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update'] },
  ]
}

const labels = { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/part-of': 'edgeop' }

/**
 * The operator's manifests, in apply order, by file name. `kubectl apply -f deploy/` reads the
 * files in lexical order, so the Namespace's file sorts first: every namespaced object after it.
 */
export function operatorManifests(image = 'ghcr.io/example/edgeop:0.1.0'): Record<string, KubeObject[]> {
  const meta = (name: string, namespaced = true) => ({
    name,
    ...(namespaced ? { namespace: OPERATOR_NAMESPACE } : {}),
    labels,
  })
  return {
    '00-namespace.yaml': [
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
        kind: 'ClusterRole',
        metadata: meta(`${OPERATOR_NAME}-metrics-auth`, false),
        rules: metricsAuthRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: meta(`${OPERATOR_NAME}-metrics-auth`, false),
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `${OPERATOR_NAME}-metrics-auth`,
        },
        subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
      },
      // Bind a scraper's ServiceAccount (Prometheus) to it; no binding ships.
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: METRICS_READER_ROLE, labels: { 'app.kubernetes.io/part-of': 'edgeop' } },
        rules: metricsReaderRules(),
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
              terminationGracePeriodSeconds: TERMINATION_GRACE_PERIOD_SECONDS,
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
                    // HTTPS with a TokenReview and a SubjectAccessReview per scrape (--metrics-secure,
                    // the default); self-signed unless --metrics-cert-path names a mounted Secret.
                    `--metrics-bind-address=:${METRICS_PORT}`,
                    `--health-probe-bind-address=:${PROBE_PORT}`,
                    `--shutdown-grace-period=${DRAIN_GRACE_MS / 1000}s`,
                    `--leader-election-renew-deadline=${RELEASE_BOUND_MS / 1000}s`,
                    // No `--database-api`: no database service ships with edgeop (deploy/README.md).
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
    'pdb.yaml': [disruptionBudget(meta(OPERATOR_NAME), { 'app.kubernetes.io/name': OPERATOR_NAME })],
    'metrics-service.yaml': [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(`${OPERATOR_NAME}-metrics`),
        spec: {
          type: 'ClusterIP',
          selector: { 'app.kubernetes.io/name': OPERATOR_NAME },
          ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' }],
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
