/** @module objects — what a reconciler does to Kubernetes objects: apply on drift, conditions, finalizers, owner references, live checks, events, CRDs and validation from zod. */
export { type ApplyOutcome, applyIfDrifted } from './apply.ts'
export type { CelReason, CelRule } from './cel-rule.ts'
export { ConditionSchema, ConditionsSchema } from './condition-schema.ts'
export {
  type ConditionInput,
  findCondition,
  rfc3339,
  setCondition,
  updateStatusIfChanged,
} from './conditions.ts'
export {
  type CrdDefinition,
  customResourceDefinition,
  type KubernetesMeta,
  type OpenApiSchema,
  openApiFromZod,
} from './crd.ts'
export {
  DEFAULT_EVENT_BURST,
  DEFAULT_EVENT_REFILL_MS,
  DEFAULT_SERIES_FINISH_MS,
  DEFAULT_SERIES_FLUSH_MS,
  DEFAULT_SERIES_WINDOW_MS,
  EventRecorder,
  type EventRecorderOptions,
} from './events.ts'
export {
  ensureFinalizer,
  type FinalizeOutcome,
  finalize,
  removeFinalizer,
} from './finalizer.ts'
export { LiveCheck, type LiveCheckOutcome } from './live-check.ts'
export { LocalObjectReferenceSchema, ObjectReferenceSchema } from './object-reference-schema.ts'
export { controllerReference, withControllerReference } from './owner.ts'
export {
  DEFAULT_MIGRATION_CHUNK_SIZE,
  migrateStorage,
  type StorageMigrationOptions,
  type StorageMigrationResult,
} from './storage-migration.ts'
export {
  type CelCheck,
  celRule,
  type SchemaCheck,
  validateAgainst,
} from './validation.ts'
