/**
 * @module webhooks — the AppService admission webhooks. Validation refuses, at write time, a spec the
 * reconciler could only mark Degraded: the image reference check of {@link unusableSpec}, a regular
 * expression over the whole reference that CEL's cost limits make awkward in the CRD. Mutation
 * defaults the `app.kubernetes.io/name` label to the object's name, so every AppService can be
 * selected by the recommended label. Conversion serves v1alpha1 and v1beta1 views of one object.
 */
import type { OperatorWebhooks } from '../../operator/index.ts'
import type { AdmissionResult, WebhookServer } from '../../webhook/index.ts'
import { convertAppService } from './convert.ts'
import {
  CONVERT_PATH,
  MUTATE_PATH,
  OPERATOR_NAME,
  VALIDATE_PATH,
  WEBHOOK_SECRET,
  WEBHOOK_SERVICE,
} from './deployment-names.ts'
import { APPSERVICES_CRD } from './manifests.ts'
import { validateSpec } from './validate.ts'

/** The label the mutating webhook defaults (Kubernetes' recommended `app.kubernetes.io/name`). */
export const NAME_LABEL = 'app.kubernetes.io/name'

/** Denies an AppService whose spec the operator cannot honour; warns about a mutable image tag. */
export function validateAppService(spec: unknown): AdmissionResult {
  const check = validateSpec(spec)
  if (!check.ok) return { allowed: false, message: check.problem, code: 422 }
  const image = check.spec.image
  const last = image.slice(image.lastIndexOf('/') + 1)
  return image.includes('@sha256:') || (last.includes(':') && !last.endsWith(':latest'))
    ? {}
    : {
        warnings: [
          `spec.image ${JSON.stringify(image)} has no fixed tag or digest: pods may run different code`,
        ],
      }
}

/**
 * The webhooks of `edgeop run`: validation and the label default, their configurations named
 * {@link OPERATOR_NAME}, and the CRD's v1alpha1 ⇄ v1beta1 conversion ({@link convertAppService}).
 */
export function appServiceWebhooks(): OperatorWebhooks<unknown> {
  return {
    service: WEBHOOK_SERVICE,
    secret: WEBHOOK_SECRET,
    validating: [OPERATOR_NAME],
    mutating: [OPERATOR_NAME],
    crds: [APPSERVICES_CRD],
    register: (server: WebhookServer) =>
      server
        .validate(VALIDATE_PATH, (req) => (req.object ? validateAppService(req.object.spec) : undefined))
        .mutate(MUTATE_PATH, (_req, object) => {
          const name = object.metadata?.name
          if (name && !object.metadata.labels?.[NAME_LABEL])
            object.metadata.labels = { ...object.metadata.labels, [NAME_LABEL]: name }
          return undefined
        })
        .convert(CONVERT_PATH, convertAppService),
  }
}
