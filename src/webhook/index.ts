/** @module webhook — admission and conversion webhooks served by the operator: the HTTPS server, its handlers' types, and the certificates it manages for itself. */

export { type AdmissionRequest, type AdmissionResult, jsonPatch } from './admission.ts'
export {
  WebhookCertController,
  type WebhookCertControllerOptions,
} from './cert-controller.ts'
export {
  type CertStep,
  type CertTiming,
  certStep,
  notAfter,
  pemCertificates,
  WEBHOOK_CA_VALIDITY_MS,
  WEBHOOK_CERT_CHECK_INTERVAL_MS,
  WEBHOOK_CERT_RENEW_BEFORE_MS,
  WEBHOOK_CERT_VALIDITY_MS,
  type WebhookCertData,
} from './cert-rotation.ts'
export {
  type Converter,
  DEFAULT_WEBHOOK_BIND_ADDRESS,
  MAX_REVIEW_DEPTH,
  type MutatingHandler,
  type ValidatingHandler,
  type WebhookResponse,
  WebhookServer,
  type WebhookServerOptions,
} from './webhook-server.ts'
