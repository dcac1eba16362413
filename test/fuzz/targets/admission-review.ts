/**
 * @module admission-review — fuzz target: AdmissionReview bodies posted to the AppService operator's
 * validating and mutating webhooks (`WebhookServer.serve`, in-process).
 *
 * Answered: `serve` resolves with 200 (carrying `response.uid`), 400, 404, 413 or 500, and nothing
 * escapes; a rejection or an escaped error would leave the apiserver without an answer or end the process.
 */
import { MUTATE_PATH, VALIDATE_PATH } from '../../../src/operators/appservice/deployment-names.ts'
import type { FuzzTarget } from '../harness.ts'
import { REVIEW_DICTIONARY, reviewSession } from './review-bodies.ts'

export const admissionReview: FuzzTarget = {
  name: 'admission-review',
  entry: 'WebhookServer.serve on the AppService validate and mutate routes',
  dictionary: REVIEW_DICTIONARY,
  maxBytes: 64 * 1024,
  open: async () => reviewSession([VALIDATE_PATH, MUTATE_PATH]),
}
