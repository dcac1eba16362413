/**
 * @module api — the AppService API (platform.example.com v1alpha1 and v1beta1), defined once.
 *
 * The zod/mini schemas below are the single definition: the TypeScript types are
 * inferred from them, the reconciler validates with them, and the CRD in deploy/ is
 * generated from them (`edgeop crd`; a test keeps deploy/crd.yaml equal).
 *
 * Two versions are served. They differ in one field: v1alpha1's `database: {enabled, class}`
 * is v1beta1's `database: {engine, size}`, present exactly when a database is wanted. The
 * conversion webhook (convert.ts) maps them without loss. The shipped CRD (deploy/, config/, the
 * chart) stores v1beta1 since chart 0.2.0 (0.1.0 stored v1alpha1): after it is applied, `edgeop
 * migrate` (deploy/migrate/job.yaml) rewrites what is stored and trims `status.storedVersions`
 * (docs/operations.md, Upgrading the chart). The operator still reconciles v1alpha1, converted by its
 * own webhook; `appServiceCrd()`'s default stays v1alpha1 for an operator no webhook call reaches.
 */
import * as z from 'zod/mini'
import type { ResourceType } from '../../client/index.ts'
import type { Condition, KubeObject, ObjectMeta } from '../../core/index.ts'
import { ConditionsSchema, celRule, customResourceDefinition } from '../../objects/index.ts'
import { CONVERT_PATH, OPERATOR_NAMESPACE, WEBHOOK_SERVICE } from './deployment-names.ts'

export const GROUP = 'platform.example.com'
export const VERSION = 'v1alpha1'
/** The second served version: the database named by engine and size (see convert.ts). */
export const VERSION_V1BETA1 = 'v1beta1'
export const KIND = 'AppService'

/** How the API server addresses AppServices; typed, so clients and informers of it hold {@link AppService}s. */
export const APPSERVICES: ResourceType<AppService> = {
  group: GROUP,
  version: VERSION,
  resource: 'appservices',
  namespaced: true,
  kind: KIND,
}

/** A database class as the external database service names them (63 characters also bounds CEL cost). */
const DATABASE_CLASS = /^[a-z0-9-]{1,63}$/

/** Why the port and the class stay put while there is a database entry: it was created for them. */
const FIXED_WITH_DATABASE = 'cannot change while the database is enabled'

/**
 * `spec`: what the user asks for. Rules the apiserver and the operator both enforce: the class is named
 * as the service names classes, and is needed when the database is enabled.
 * Transition rules only the apiserver enforces (the operator never sees the old spec): while the database
 * is enabled before and after an update, neither `port` nor `database.class` changes — the database
 * entry was created for them, and the operator never edits an existing entry.
 */
const BASE = () => ({
  image: z.string().check(z.minLength(1), z.meta({ description: 'Container image of the application.' })),
  replicas: z._default(z.int32().check(z.minimum(0), z.meta({ description: 'Number of pods.' })), 1),
  port: z._default(
    z.int32().check(z.minimum(1), z.maximum(65535), z.meta({ description: 'Container and Service port.' })),
    8080,
  ),
})
const PORT_FIXED = (enabled: (self: string) => string) =>
  celRule({
    rule: `!(${enabled('self')} && ${enabled('oldSelf')}) || self.port == oldSelf.port`,
    message: FIXED_WITH_DATABASE,
    reason: 'FieldValueForbidden',
    fieldPath: '.port',
  })

export const AppServiceSpec = z
  .object({
    ...BASE(),
    database: z.optional(
      z
        .object({
          enabled: z._default(
            z.boolean().check(z.meta({ description: 'Create the database entry.' })),
            false,
          ),
          class: z.optional(
            z
              .string()
              .check(
                z.maxLength(63),
                z.regex(DATABASE_CLASS, 'must be lowercase letters, digits or dashes'),
                z.meta({ description: 'Database class; needed when enabled.' }),
              ),
          ),
        })
        .check(
          z.meta({ description: 'Entry at the external database service.' }),
          celRule({
            rule: '!self.enabled || has(self.class)',
            message: 'needed when the database is enabled',
            reason: 'FieldValueRequired',
            fieldPath: '.class',
            test: (d) => !d.enabled || d.class !== undefined,
          }),
          celRule({
            // Optional-typed `self.?class == oldSelf.?class` is costed as unbounded; a missing class is the rule above's.
            rule: '!(self.enabled && oldSelf.enabled) || !has(self.class) || !has(oldSelf.class) || self.class == oldSelf.class',
            message: FIXED_WITH_DATABASE,
            reason: 'FieldValueForbidden',
            fieldPath: '.class',
          }),
        ),
    ),
  })
  .check(
    z.meta({ description: 'The application to run.' }),
    PORT_FIXED((s) => `${s}.?database.enabled.orValue(false)`),
  )
export type AppServiceSpec = z.infer<typeof AppServiceSpec>

/** v1beta1's database engines. */
export const DATABASE_ENGINES = ['postgres', 'mysql'] as const
/** v1beta1's database sizes. */
export const DATABASE_SIZES = ['small', 'medium', 'large'] as const

/**
 * v1beta1 `spec`: v1alpha1's but for `database`, which names an engine and a size and is present
 * exactly when a database is wanted. The same transition rules: while there is a database before
 * and after an update, neither `port` nor `database` changes.
 */
export const AppServiceSpecV1beta1 = z
  .object({
    ...BASE(),
    database: z.optional(
      z
        .object({
          engine: z.enum(DATABASE_ENGINES).check(z.meta({ description: 'Database engine.' })),
          size: z.enum(DATABASE_SIZES).check(z.meta({ description: 'Database size.' })),
        })
        .check(
          z.meta({ description: 'Entry at the external database service; absent: none.' }),
          celRule({ rule: 'self == oldSelf', message: FIXED_WITH_DATABASE, reason: 'FieldValueForbidden' }),
        ),
    ),
  })
  .check(
    z.meta({ description: 'The application to run.' }),
    PORT_FIXED((s) => `has(${s}.database)`),
  )
export type AppServiceSpecV1beta1 = z.infer<typeof AppServiceSpecV1beta1>

/** `status`: what the operator observed. */
export const AppServiceStatus = z.object({
  observedGeneration: z.optional(z.int()),
  readyReplicas: z.optional(z.int32()),
  selector: z.optional(z.string()),
  endpoint: z.optional(z.string()),
  // What the operator recorded about the database entry (see database-plan.ts): Creating (a create
  // was or is about to be sent, outcome unknown), Provisioning (polling `task`), Ready.
  database: z.optional(
    z.object({ phase: z.enum(['Creating', 'Provisioning', 'Ready']), task: z.optional(z.string()) }),
  ),
  conditions: ConditionsSchema,
})
export type AppServiceStatus = z.infer<typeof AppServiceStatus>

/** An AppService object. */
export interface AppService extends KubeObject {
  metadata: ObjectMeta
  spec: AppServiceSpec
  status?: AppServiceStatus & { conditions?: Condition[] }
}

/** Condition types. */
export const CONDITION = {
  ready: 'Ready',
  progressing: 'Progressing',
  degraded: 'Degraded',
  database: 'DatabaseReady',
} as const

/** Condition reasons (stable: users alert on them). */
export const REASON = {
  available: 'DeploymentAvailable',
  progressing: 'DeploymentProgressing',
  unavailable: 'DeploymentUnavailable',
  invalid: 'InvalidConfiguration',
  externalDown: 'ExternalAPIUnavailable',
  finalizationFailed: 'FinalizationFailed',
  asExpected: 'AsExpected',
  provisioning: 'DatabaseProvisioning',
  provisioned: 'DatabaseProvisioned',
} as const

/** The storage version of the shipped CRD (deploy/crd.yaml, config/, the chart's crds/) since chart 0.2.0. */
export const SHIPPED_STORAGE_VERSION = VERSION_V1BETA1

/** Options of {@link appServiceCrd}. */
export interface AppServiceCrdOptions {
  /**
   * The storage version; default v1alpha1, the version the operator reads, so a CRD for an operator
   * the apiserver cannot call (run outside the cluster: `edgeop install`, tests) needs no webhook for
   * it. The shipped manifests store v1beta1 ({@link SHIPPED_STORAGE_VERSION}).
   */
  storage?: typeof VERSION | typeof VERSION_V1BETA1
  /**
   * Where the apiserver calls the conversion webhook (`clientConfig`: a `service` or a `url`, and a
   * `caBundle`), or `false` for a CRD serving v1alpha1 alone, with no conversion (a cluster where
   * the operator's webhooks are off). Default: the operator's webhook Service, path `/convert`.
   */
  conversion?: Record<string, unknown> | false
}

/**
 * The CRD, generated from the schemas above: both versions served, converted by the webhook at
 * `conversion` (without its `caBundle`, which the operator patches in).
 */
export function appServiceCrd(o: AppServiceCrdOptions = {}) {
  const cc = o.conversion ?? {
    service: { namespace: OPERATOR_NAMESPACE, name: WEBHOOK_SERVICE, path: CONVERT_PATH, port: 443 },
  }
  return customResourceDefinition({
    group: GROUP,
    version: VERSION,
    ...(cc
      ? {
          versions: [{ name: VERSION_V1BETA1, spec: AppServiceSpecV1beta1 }],
          storage: o.storage ?? VERSION,
          conversion: {
            strategy: 'Webhook',
            webhook: { conversionReviewVersions: ['v1'], clientConfig: cc },
          },
        }
      : {}),
    kind: KIND,
    plural: 'appservices',
    singular: 'appservice',
    shortNames: ['appsrv'],
    scope: 'Namespaced',
    spec: AppServiceSpec,
    status: AppServiceStatus,
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.readyReplicas',
      labelSelectorPath: '.status.selector',
    },
    printerColumns: [
      { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
      { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  })
}
