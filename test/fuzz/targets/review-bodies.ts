/**
 * @module review-bodies — what the admission-review and conversion-review targets share: a
 * `WebhookServer` with the AppService operator's routes, fed bodies in-process through `serve`.
 */
import { appServiceWebhooks } from '../../../src/operators/appservice/webhooks.ts'
import { WebhookServer } from '../../../src/webhook/webhook-server.ts'
import { describeError, escapedErrors, Finding, type FuzzSession } from '../harness.ts'

/** JSON syntax, and the review's field names. */
export const REVIEW_DICTIONARY: readonly string[] = [
  '{', '}', '[', ']', '"', ',', ':', '{"a":', '[[', 'null', 'true', '-0', '1e999', '"\\u0000"', '"\\ud800"', '\\',
  '"apiVersion":', '"kind":', '"request":', '"uid":', '"object":', '"oldObject":', '"metadata":', '"spec":',
  '"labels":', '"name":', '"objects":', '"desiredAPIVersion":', '"__proto__":', '"constructor":', '"toString":',
  '"admission.k8s.io/v1"', '"AdmissionReview"', '"apiextensions.k8s.io/v1"', '"ConversionReview"',
  '"platform.example.com/v1alpha1"', '"platform.example.com/v1beta1"',
] // biome-ignore format: a word list

/** The statuses `serve` documents: 200, 400 (no review), 404 (no route), 413 (too large), 500 (handler failed). */
const ANSWERS = new Set([200, 400, 404, 413, 500])

/** A session posting each input to every one of `paths`. */
export function reviewSession(paths: readonly string[]): FuzzSession {
  const server = new WebhookServer()
  appServiceWebhooks().register(server, undefined)
  const escaped = escapedErrors()
  return {
    async run(input) {
      const body = Buffer.from(input).toString('utf8')
      for (const path of paths) {
        let r: { status: number; body: unknown }
        try {
          r = await server.serve(path, body)
        } catch (err) {
          throw new Finding(
            `serve(${path}) rejected (the request would go unanswered): ${describeError(err)}`,
            err,
          )
        }
        if (!ANSWERS.has(r.status)) throw new Finding(`serve(${path}) answered ${r.status}`)
        const uid = (r.body as { response?: { uid?: unknown } } | undefined)?.response?.uid
        if (r.status === 200 && typeof uid !== 'string')
          throw new Finding(`serve(${path}) answered 200 without response.uid`)
      }
      const err = escaped.take()
      if (err !== undefined)
        throw new Finding(`escaped serve (the process would exit): ${describeError(err)}`, err)
    },
    async close() {
      escaped.stop()
    },
  }
}
