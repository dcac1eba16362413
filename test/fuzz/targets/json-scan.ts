/**
 * @module json-scan — fuzz target: the JSON byte scanner behind the JSON codec (`jsonCodec.scan`,
 * `stripManagedFields`, `decode`), list bodies (`decodeListBytes`, each item materialized) and single
 * watch-event lines (`decodeEventBytes`).
 *
 * Answered: a value or an `EdgeopError` `EDGEOP_ERR_DECODE`, never a `RangeError` or `TypeError`.
 */
import { jsonCodec } from '../../../src/client/json-codec.ts'
import { decodeEventBytes, decodeListBytes } from '../../../src/client/json-wire.ts'
import { materialize } from '../../../src/core/wire-object.ts'
import { decoding, type FuzzSession, type FuzzTarget } from '../harness.ts'
import { REVIEW_DICTIONARY } from './review-bodies.ts'

/** JSON syntax (shared with the reviews), and the fields the scanner looks for. */
export const JSON_DICTIONARY: readonly string[] = [
  ...REVIEW_DICTIONARY,
  '"managedFields":', '"items":', '"resourceVersion":', '"generation":', '"namespace":', '"annotations":',
  '"ownerReferences":', '"deletionTimestamp":', '"type":', '"ADDED"', '"BOOKMARK"', '"ERROR"', ' ', '\t', '\n',
  '\\"', '\\u00e9', '\u00e9', '\xff', '123456789012345678901234567890', '-', '.5', 'e+',
] // biome-ignore format: a word list

export const jsonScan: FuzzTarget = {
  name: 'json-scan',
  entry:
    'jsonCodec.scan / stripManagedFields / decode, decodeListBytes (items materialized), decodeEventBytes',
  dictionary: JSON_DICTIONARY,
  maxBytes: 64 * 1024,
  async open(): Promise<FuzzSession> {
    return {
      async run(input) {
        await decoding(() => jsonCodec.scan(input))
        await decoding(() => jsonCodec.decode(jsonCodec.stripManagedFields(input)))
        await decoding(async () => {
          for (const item of decodeListBytes(input).items) await decoding(() => materialize(item))
        })
        await decoding(() => {
          const e = decodeEventBytes(input)
          if (e && 'object' in e && e.object) materialize(e.object)
        })
      },
      async close() {},
    }
  },
}
