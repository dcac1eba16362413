/**
 * @module conversion-review — fuzz target: ConversionReview bodies posted to the AppService CRD's
 * conversion webhook (`WebhookServer.serve` with `convertAppService`, in-process).
 *
 * Answered: `serve` resolves with 200 (carrying `response.uid`; a converter that throws is a `Failure`
 * result), 400, 404, 413 or 500, and nothing escapes.
 */
import { CONVERT_PATH } from '../../../src/operators/appservice/deployment-names.ts'
import type { FuzzTarget } from '../harness.ts'
import { REVIEW_DICTIONARY, reviewSession } from './review-bodies.ts'

export const conversionReview: FuzzTarget = {
  name: 'conversion-review',
  entry: 'WebhookServer.serve on the AppService conversion route (convertAppService)',
  dictionary: REVIEW_DICTIONARY,
  maxBytes: 64 * 1024,
  open: async () => reviewSession([CONVERT_PATH]),
}
