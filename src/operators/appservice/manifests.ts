/**
 * @module manifests — everything a cluster admin applies to run the AppService operator.
 *
 * Generated here and printed by `edgeop manifests`; deploy/*.yaml are these objects
 * (a test keeps them equal). RBAC is least privilege: only the verbs the operator
 * uses, Lease access only in its own namespace. Resource requests and limits come
 * from measurements (docs/benchmarks.md, "Numbers").
 */

import type { KubeObject } from '../../core/index.ts'
import { DEFAULT_RENEW_DEADLINE_MS } from '../../leader/index.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS } from '../../manager/index.ts'
import { appServiceCrd, GROUP, SHIPPED_STORAGE_VERSION } from './api.ts'
import {
  METRICS_PORT,
  METRICS_READER_ROLE,
  MUTATE_PATH,
  OPERATOR_NAME,
  OPERATOR_NAMESPACE,
  OPERATOR_NAMESPACE_LABEL,
  PROBE_PORT,
  SCRAPER_NAMESPACE,
  VALIDATE_PATH,
  WEBHOOK_PORT,
  WEBHOOK_SECRET,
  WEBHOOK_SERVICE,
  WEBHOOK_TIMEOUT_SECONDS,
} from './deployment-names.ts'
import { disruptionBudget } from './disruption-budget.ts'

/** The AppService CRD's name. */
export const APPSERVICES_CRD = `appservices.${GROUP}`

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

/** Where a pod's ingress may come from: {@link ingressPolicy}'s options. */
export interface IngressPolicyOptions {
  /** The HTTPS `/metrics` port: admitted from pods in {@link SCRAPER_NAMESPACE} only. */
  metricsPort: number
  /** The webhook port, admitted only from `apiserverCidrs`; absent for a pod without webhooks. */
  webhookPort?: number
  /**
   * The apiserver's source addresses (control-plane node IPs, or the ENIs/range of a managed
   * control plane). Empty: no rule for the webhook port, which then admits nothing but the pod's own
   * node: a NetworkPolicy cannot name the apiserver portably, so it is given, never guessed.
   */
  apiserverCidrs?: readonly string[]
}

/**
 * The NetworkPolicy of a pod serving secure metrics (and webhooks): ingress to the metrics port from
 * the scrapers' namespace, to the webhook port from the apiserver's addresses, and nothing else. The
 * probe port needs no rule: the kubelet probes from the pod's own node, which a NetworkPolicy does not
 * block (Kubernetes documentation, "Network Policies": pods cannot block access from their resident node).
 */
export function ingressPolicy(
  metadata: KubeObject['metadata'],
  podLabels: Record<string, string>,
  o: IngressPolicyOptions,
): KubeObject {
  const cidrs = o.apiserverCidrs ?? []
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata,
    spec: {
      podSelector: { matchLabels: podLabels },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SCRAPER_NAMESPACE } } },
          ],
          ports: [{ port: o.metricsPort, protocol: 'TCP' }],
        },
        ...(o.webhookPort !== undefined && cidrs.length > 0
          ? [
              {
                from: cidrs.map((cidr) => ({ ipBlock: { cidr } })),
                ports: [{ port: o.webhookPort, protocol: 'TCP' }],
              },
            ]
          : []),
      ],
    },
  }
}

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

/**
 * The ClusterRole rules of the webhook certificate controller: read its two webhook configurations and
 * the AppService CRD and patch their `caBundle`, by name.
 */
export function webhookRules() {
  return [
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'],
      resourceNames: [OPERATOR_NAME],
      verbs: ['get', 'patch'],
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: [APPSERVICES_CRD],
      verbs: ['get', 'patch'],
    },
  ]
}

/** The Role rules in the operator's namespace for the webhook certificate Secret (`create` cannot be limited by name). */
export function webhookSecretRules() {
  return [
    { apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_SECRET], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
  ]
}

/**
 * The webhook configurations: validation fails closed (`Fail`: a spec the operator cannot honour must
 * not be stored while it is away; two replicas and a disruption budget keep one answering), the label
 * default fails open (`Ignore`: a missing label is cosmetic). Neither sees the operator's namespace,
 * nor the operator's own writes (finalizers on an AppService whose spec became invalid must still go
 * through). `caBundle` is left out: the operator patches it in.
 */
export function webhookConfigurations(
  namespace = OPERATOR_NAMESPACE,
  serviceAccount = OPERATOR_NAME,
): KubeObject[] {
  // `namespace` names the Service only (kustomize's namespace transformer rewrites that field).
  const webhook = (name: string, path: string, failurePolicy: 'Fail' | 'Ignore') => ({
    name: `${name}.${GROUP}`,
    admissionReviewVersions: ['v1'],
    clientConfig: { service: { name: WEBHOOK_SERVICE, namespace, path, port: 443 } },
    rules: [
      {
        apiGroups: [GROUP],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['appservices'],
        scope: 'Namespaced',
      },
    ],
    failurePolicy,
    sideEffects: 'None',
    timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
    // By the label its Namespace object carries, not by name: a kustomize `namespace:` overlay renames
    // the Namespace and keeps its labels, but leaves a name in a selector's values as it was.
    namespaceSelector: {
      matchExpressions: [{ key: OPERATOR_NAMESPACE_LABEL, operator: 'DoesNotExist' }],
    },
    // The operator's ServiceAccount in whichever namespace it runs (an overlay cannot rewrite a CEL
    // string). An account of that name elsewhere is excluded too: making one act on AppServices takes
    // the rights to create ServiceAccounts and bind them, and the reconciler still refuses a spec it
    // cannot honour.
    matchConditions: [
      {
        name: 'not-the-operator',
        expression: `!(request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${serviceAccount}'))`,
      },
    ],
  })
  const metadata = { name: OPERATOR_NAME, labels }
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata,
      webhooks: [webhook('validate.appservices', VALIDATE_PATH, 'Fail')],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata,
      webhooks: [{ ...webhook('default.appservices', MUTATE_PATH, 'Ignore'), reinvocationPolicy: 'Never' }],
    },
  ]
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
/** The operator pod's security context (Pod Security "restricted"): non-root as the image's user 65532, the runtime's seccomp profile. */
export function podSecurityContext() {
  return {
    runAsNonRoot: true,
    runAsUser: 65532,
    runAsGroup: 65532,
    seccompProfile: { type: 'RuntimeDefault' },
  }
}

/** The operator container's security context (Pod Security "restricted"): no privilege escalation, a read-only root, no capabilities. */
export function containerSecurityContext() {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }
}

export function operatorManifests(image = 'ghcr.io/example/edgeop:0.1.0'): Record<string, KubeObject[]> {
  const meta = (name: string, namespaced = true) => ({
    name,
    ...(namespaced ? { namespace: OPERATOR_NAMESPACE } : {}),
    labels,
  })
  /** A (Cluster)Role `<operator><suffix>` with `rules`, and its binding to the operator's ServiceAccount. */
  const role = (kind: 'ClusterRole' | 'Role', suffix: string, rules: unknown[]): KubeObject[] => {
    const metadata = meta(OPERATOR_NAME + suffix, kind === 'Role')
    const apiVersion = 'rbac.authorization.k8s.io/v1'
    return [
      { apiVersion, kind, metadata, rules },
      {
        apiVersion,
        kind: `${kind}Binding`,
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: metadata.name },
        subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: OPERATOR_NAMESPACE }],
      },
    ]
  }
  return {
    '00-namespace.yaml': [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: OPERATOR_NAMESPACE, labels: { ...labels, [OPERATOR_NAMESPACE_LABEL]: 'true' } },
      },
    ],
    'crd.yaml': [appServiceCrd({ storage: SHIPPED_STORAGE_VERSION }) as unknown as KubeObject],
    'rbac.yaml': [
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: meta(OPERATOR_NAME),
        automountServiceAccountToken: true,
      },
      ...role('ClusterRole', '', operatorRules()),
      ...role('ClusterRole', '-metrics-auth', metricsAuthRules()),
      ...role('ClusterRole', '-webhook', webhookRules()),
      ...role('Role', '-webhook-cert', webhookSecretRules()),
      // Bind a scraper's ServiceAccount (Prometheus) to it; no binding ships.
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: METRICS_READER_ROLE, labels: { 'app.kubernetes.io/part-of': 'edgeop' } },
        rules: metricsReaderRules(),
      },
      ...role('Role', '-leader-election', leaseRules()),
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
              securityContext: podSecurityContext(),
              containers: [
                {
                  name: 'operator',
                  image,
                  args: [
                    'run',
                    '--leader-elect',
                    `--leader-election-id=${OPERATOR_NAME}`,
                    // No --leader-election-namespace: the pod's own (the in-cluster namespace file), so
                    // a kustomize `namespace:` overlay moves the Lease with the operator.
                    // HTTPS with a TokenReview and a SubjectAccessReview per scrape (--metrics-secure,
                    // the default); self-signed unless --metrics-cert-path names a mounted Secret.
                    `--metrics-bind-address=:${METRICS_PORT}`,
                    `--health-probe-bind-address=:${PROBE_PORT}`,
                    `--webhook-bind-address=:${WEBHOOK_PORT}`,
                    `--shutdown-grace-period=${DRAIN_GRACE_MS / 1000}s`,
                    `--leader-election-renew-deadline=${RELEASE_BOUND_MS / 1000}s`,
                    // No `--database-api`: no database service ships with edgeop (deploy/README.md).
                  ],
                  ports: [
                    { name: 'metrics', containerPort: METRICS_PORT },
                    { name: 'probes', containerPort: PROBE_PORT },
                    { name: 'webhook', containerPort: WEBHOOK_PORT },
                  ],
                  livenessProbe: {
                    httpGet: { path: '/healthz', port: 'probes' },
                    periodSeconds: 10,
                    failureThreshold: 3,
                  },
                  readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 5 },
                  // Measured (docs/benchmarks.md, Numbers): 72 MiB idle with nothing cached, 235 MiB with 1,000
                  // AppServices and their Deployments and Services cached; the limit leaves headroom.
                  resources: { requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '384Mi' } },
                  securityContext: containerSecurityContext(),
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
    'webhook-service.yaml': [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(WEBHOOK_SERVICE),
        spec: {
          type: 'ClusterIP',
          selector: { 'app.kubernetes.io/name': OPERATOR_NAME },
          ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }],
        },
      },
    ],
    'webhooks.yaml': webhookConfigurations(),
    'networkpolicy.yaml': [
      // Named `-metrics` since before it admitted webhooks: an upgrade replaces the old policy, whose
      // rules (probe and webhook ports open to every source) would otherwise stay in force beside it.
      ingressPolicy(
        meta(`${OPERATOR_NAME}-metrics`),
        { 'app.kubernetes.io/name': OPERATOR_NAME },
        { metricsPort: METRICS_PORT, webhookPort: WEBHOOK_PORT },
      ),
    ],
  }
}
