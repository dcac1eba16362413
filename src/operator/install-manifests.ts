/**
 * @module install-manifests — what a cluster admin applies to run an operator built with
 * {@link runOperator}, generated from what its {@link OperatorSpec} declares: its CRDs, the RBAC
 * rules its `check` verifies, and its flags (a Lease Role only when it has `--leader-elect`).
 *
 * kubebuilder writes these as `config/` from markers in the Go source; here the spec is the source,
 * so the RBAC the operator is granted and the RBAC `check` verifies are one list.
 */
import type { FlagSet } from '../cli/index.ts'
import type { KubeObject } from '../core/index.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS, leaderElectionPermissions } from '../manager/index.ts'
import type { OperatorSpec, ProcessFlags } from './operator-spec.ts'
import type { RbacRule } from './rule-permissions.ts'

/** The metrics port in the pod: HTTPS (`--metrics-secure`, the default), kubebuilder's 8443. */
export const METRICS_PORT = 8443
/** The probe port in the pod: controller-runtime's `:8081`. */
export const PROBE_PORT = 8081
/** distroless's nonroot uid and gid, which the Deployment runs as. */
export const NONROOT_ID = 65532
/**
 * The pod's termination grace: the shutdown drain (`--shutdown-grace-period`, 30 s), then the Lease
 * release (bounded by the renew deadline, client-go's 10 s) and 5 s to exit, before the kubelet's
 * SIGKILL: the kubelet's default of 30 s would kill a full drain before the Lease is released.
 */
export const TERMINATION_GRACE_SECONDS = DEFAULT_SHUTDOWN_GRACE_PERIOD_MS / 1000 + 15

/**
 * The container's default resources: a 96 Mi request over the edgeop operator's measured idle RSS
 * (66–73 MiB, docs/benchmarks.md), kubebuilder's 10m CPU request, and the AppService operator's 384 Mi
 * limit (measured with 1,000 objects and their children cached). Size them from your operator's own
 * `process_resident_memory_bytes`.
 */
export const DEFAULT_RESOURCES = {
  requests: { cpu: '10m', memory: '96Mi' },
  limits: { memory: '384Mi' },
} as const

/** Options of {@link installManifests}. */
export interface InstallManifestOptions {
  /** The container image of the Deployment, e.g. `registry.example.com/widgets:0.1.0`. */
  image: string
  /** The namespace of the ServiceAccount, the Lease and the Deployment. Default `<name>-system` (kubebuilder's). */
  namespace?: string
  /** The Deployment's replicas. Default 1 (kubebuilder's); more wait as leader-election standbys. */
  replicas?: number
  /** The container's `resources`. Default {@link DEFAULT_RESOURCES}. */
  resources?: Record<string, unknown>
}

/** The ClusterRole rules that let `/metrics` check each scrape's token (kubebuilder's `metrics-auth-role`). */
export const METRICS_AUTH_RULES: readonly RbacRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
]

/** The Role rules leader election needs: exactly the Lease permissions `check --leader-elect` verifies. */
export function leaseRules(): RbacRule[] {
  const p = leaderElectionPermissions('')
  return [{ apiGroups: [p.group], resources: [p.resource], verbs: [...p.verbs] }]
}

/**
 * A (Cluster)Role with `rules` and its binding to the ServiceAccount `namespace/name`: the pair every
 * grant of an operator's manifests is made of. A Role lives in `metadata.namespace`.
 */
export function roleAndBinding(
  kind: 'ClusterRole' | 'Role',
  metadata: KubeObject['metadata'],
  rules: readonly object[],
  name: string,
  namespace: string,
): KubeObject[] {
  const apiVersion = 'rbac.authorization.k8s.io/v1'
  return [
    { apiVersion, kind, metadata, rules },
    {
      apiVersion,
      kind: `${kind}Binding`,
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: metadata.name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  ]
}

/**
 * Every object `spec`'s operator needs, in apply order: its CRDs, the Namespace, the ServiceAccount,
 * a ClusterRole `<name>` holding exactly `spec.check.rules`, one `<name>-metrics-auth` for secure
 * metrics, a Role `<name>-leader-election` in the namespace (when the flags have `--leader-elect`)
 * and the Deployment running `run` with leader election, metrics and probes. A rule the operator
 * needs but `check` does not list is missing here too: declare it in `check.rules`.
 *
 * @example
 * installManifests(spec, { image: 'registry.example.com/widgets:0.1.0' }).map((o) => toYaml(o)).join('---\n')
 */
export function installManifests<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  options: InstallManifestOptions,
): KubeObject[] {
  const name = spec.name
  const namespace = options.namespace ?? `${name}-system`
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'edgeop' }
  const meta = (n: string, namespaced = true) => ({ name: n, ...(namespaced ? { namespace } : {}), labels })
  const elects = spec.flags === undefined || 'leader-elect' in spec.flags
  const args = [
    'run',
    ...(elects
      ? ['--leader-elect', `--leader-election-id=${name}`, `--leader-election-namespace=${namespace}`]
      : []),
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--health-probe-bind-address=:${PROBE_PORT}`,
  ]
  return [
    ...((spec.crds ?? []) as readonly KubeObject[]),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name) },
    ...roleAndBinding('ClusterRole', meta(name, false), spec.check?.rules ?? [], name, namespace),
    ...roleAndBinding(
      'ClusterRole',
      meta(`${name}-metrics-auth`, false),
      METRICS_AUTH_RULES,
      name,
      namespace,
    ),
    ...(elects ? roleAndBinding('Role', meta(`${name}-leader-election`), leaseRules(), name, namespace) : []),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta(name),
      spec: {
        replicas: options.replicas ?? 1,
        selector: { matchLabels: { 'app.kubernetes.io/name': name } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: NONROOT_ID,
              runAsGroup: NONROOT_ID,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'operator',
                image: options.image,
                args,
                ports: [
                  { name: 'metrics', containerPort: METRICS_PORT },
                  { name: 'probes', containerPort: PROBE_PORT },
                ],
                livenessProbe: { httpGet: { path: '/healthz', port: 'probes' } },
                readinessProbe: { httpGet: { path: '/readyz', port: 'probes' } },
                resources: options.resources ?? DEFAULT_RESOURCES,
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
  ]
}
