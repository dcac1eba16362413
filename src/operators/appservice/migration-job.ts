/**
 * @module migration-job — the one-off Job that runs `edgeop migrate` after an upgrade switched the
 * AppService CRD's storage version (deploy/migrate/job.yaml, generated from here): its own
 * ServiceAccount, a ClusterRole of exactly what `migrateStorage` calls, and the Job.
 *
 * A Job of its own rather than a Helm post-upgrade hook: `helm upgrade` never changes a CRD from the
 * chart's `crds/` (Helm installs them once), so the storage switch is a step outside Helm
 * (`kubectl apply --server-side -f crds/`), and the migration must follow that step, not the
 * upgrade; a hook would run at every upgrade, before the switch when Helm's order is followed, and
 * would keep cluster-wide update rights on every AppService in the release. The Job is applied once,
 * when the operations guide says so, and deleted with its rights afterwards.
 */
import type { KubeObject } from '../../core/index.ts'
import { GROUP } from './api.ts'
import { OPERATOR_NAMESPACE } from './deployment-names.ts'
import { APPSERVICES_CRD, containerSecurityContext, podSecurityContext } from './manifests.ts'

/** The Job's, its ServiceAccount's and its ClusterRole's name. */
export const MIGRATION_JOB_NAME = 'edgeop-migrate'

/**
 * Retries of a failed run before the Job gives up: 6, Kubernetes' own default for `backoffLimit`;
 * `edgeop migrate` is idempotent, so a retry after an apiserver hiccup just finishes the work.
 */
export const MIGRATION_BACKOFF_LIMIT = 6

/** How long the finished Job stays for `kubectl logs`: one day, then the TTL controller removes it. */
export const MIGRATION_TTL_SECONDS = 86_400

/**
 * The rules `migrateStorage` needs on the AppService CRD: read the CRD, list and rewrite its objects
 * in every namespace, and merge-patch `status.storedVersions`. Nothing else.
 */
export function migrationRules() {
  return [
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: [APPSERVICES_CRD],
      verbs: ['get'],
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions/status'],
      resourceNames: [APPSERVICES_CRD],
      verbs: ['patch'],
    },
    { apiGroups: [GROUP], resources: ['appservices'], verbs: ['list', 'update'] },
  ]
}

/** deploy/migrate/job.yaml's objects: ServiceAccount, ClusterRole and binding, and the Job running `migrate` with `image`. */
export function migrationJobManifests(image: string): KubeObject[] {
  const labels = { 'app.kubernetes.io/name': MIGRATION_JOB_NAME, 'app.kubernetes.io/part-of': 'edgeop' }
  const rbac = 'rbac.authorization.k8s.io/v1'
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: MIGRATION_JOB_NAME, namespace: OPERATOR_NAMESPACE, labels },
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: MIGRATION_JOB_NAME, labels },
      rules: migrationRules(),
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: MIGRATION_JOB_NAME, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: MIGRATION_JOB_NAME },
      subjects: [{ kind: 'ServiceAccount', name: MIGRATION_JOB_NAME, namespace: OPERATOR_NAMESPACE }],
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: MIGRATION_JOB_NAME, namespace: OPERATOR_NAMESPACE, labels },
      spec: {
        backoffLimit: MIGRATION_BACKOFF_LIMIT,
        ttlSecondsAfterFinished: MIGRATION_TTL_SECONDS,
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: MIGRATION_JOB_NAME,
            restartPolicy: 'OnFailure',
            securityContext: podSecurityContext(),
            containers: [
              {
                name: 'migrate',
                image,
                args: ['migrate'],
                securityContext: containerSecurityContext(),
              },
            ],
          },
        },
      },
    },
  ]
}
