/**
 * @module api — the AppService API (platform.example.com/v1alpha1), defined once.
 *
 * The zod/mini schemas below are the single definition: the TypeScript types are
 * inferred from them, the reconciler validates with them, and the CRD in deploy/ is
 * generated from them (`edgeop crd`; a test keeps deploy/crd.yaml equal).
 */
import * as z from 'zod/mini'
import type { ResourceType } from '../../client/index.ts'
import type { Condition, KubeObject, ObjectMeta } from '../../core/index.ts'
import { customResourceDefinition } from '../../objects/index.ts'

export const GROUP = 'platform.example.com'
export const VERSION = 'v1alpha1'
export const KIND = 'AppService'

/** How the API server addresses AppServices. */
export const APPSERVICES: ResourceType = {
  group: GROUP,
  version: VERSION,
  resource: 'appservices',
  namespaced: true,
  kind: KIND,
}

/** `spec`: what the user asks for. */
export const AppServiceSpec = z.object({
  image: z.string().check(z.minLength(1), z.meta({ description: 'Container image of the application.' })),
  replicas: z._default(z.int32().check(z.minimum(0)), 1),
  port: z._default(z.int32().check(z.minimum(1), z.maximum(65535)), 8080),
  database: z.optional(
    z.object({
      enabled: z._default(z.boolean(), false),
      class: z.optional(
        z.string().check(z.meta({ description: 'Database class offered by the external database service.' })),
      ),
    }),
  ),
})
export type AppServiceSpec = z.infer<typeof AppServiceSpec>

/** One status condition (metav1.Condition). */
const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.optional(z.int()),
  // RFC 3339, checked by the apiserver; the operator only writes it, so no zod date parser is bundled.
  lastTransitionTime: z.string().check(z.meta({ kubernetes: { format: 'date-time' } })),
  reason: z.string(),
  message: z.string(),
})

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
  conditions: z.optional(
    z.array(ConditionSchema).check(z.meta({ kubernetes: { listType: 'map', listMapKeys: ['type'] } })),
  ),
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

/** The CRD, generated from the schemas above. */
export function appServiceCrd() {
  return customResourceDefinition({
    group: GROUP,
    version: VERSION,
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
