/**
 * @module json-scan — fuzz target: the JSON byte scanner behind the JSON codec (`jsonCodec.scan`,
 * `stripManagedFields`, `decode`), list bodies (`decodeListBytes`, each item materialized) and single
 * watch-event lines (`decodeEventBytes`).
 *
 * Answered: a value or an `EdgeopError` `EDGEOP_ERR_DECODE`, never a `RangeError` or `TypeError`. And,
 * against `JSON.parse` as the reference, for an object it accepts (one `metadata` member, no `\u`
 * escapes, which the scanner compares as bytes): what `scan` reads equals the parsed metadata, and the
 * bytes `stripManagedFields` leaves parse to the object without `metadata.managedFields`.
 */

import { jsonCodec } from '../../../src/codec/json-codec.ts'
import { decodeEventBytes, decodeListBytes } from '../../../src/codec/json-stubs.ts'
import type { ScannedMeta } from '../../../src/core/encoded-object.ts'
import { materialize } from '../../../src/core/encoded-object.ts'
import { decoding, Finding, type FuzzSession, type FuzzTarget, sameValue } from '../harness.ts'
import { REVIEW_DICTIONARY } from './review-bodies.ts'

/** JSON syntax (shared with the reviews), and the fields the scanner looks for. */
export const JSON_DICTIONARY: readonly string[] = [
  ...REVIEW_DICTIONARY,
  '"managedFields":', '"items":', '"resourceVersion":', '"generation":', '"namespace":', '"annotations":',
  '"ownerReferences":', '"deletionTimestamp":', '"type":', '"ADDED"', '"BOOKMARK"', '"ERROR"', ' ', '\t', '\n',
  '\\"', '\\u00e9', '\u00e9', '\xff', '123456789012345678901234567890', '-', '.5', 'e+',
] // biome-ignore format: a word list

const occurrences = (text: string, word: string): number => text.split(word).length - 1

/** The reference: `JSON.parse` of `input` when it is an object the comparison applies to. */
function reference(input: Uint8Array): Record<string, unknown> | undefined {
  const text = Buffer.from(input).toString('utf8')
  if (
    !Buffer.from(text, 'utf8').equals(input) ||
    text.includes('\\u') ||
    occurrences(text, '"metadata"') !== 1
  )
    return undefined
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return undefined
  }
  const meta = (v as { metadata?: unknown } | null)?.metadata
  const isObject = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x)
  return isObject(v) && isObject(meta) ? (v as Record<string, unknown>) : undefined
}

/** Throws a {@link Finding} where the scanner and `JSON.parse` disagree on `input`. */
function compare(input: Uint8Array): void {
  const want = reference(input)
  if (!want) return
  const meta = want.metadata as Record<string, unknown>
  let scanned: ScannedMeta
  let stripped: Uint8Array
  try {
    scanned = jsonCodec.scan(input)
    stripped = jsonCodec.stripManagedFields(input)
  } catch {
    return // a documented refusal (a metadata field of the wrong type), checked by the oracle above
  }
  for (const [k, v] of Object.entries(scanned))
    if (sameValue(v, meta[k]) === false) throw new Finding(`scan read metadata.${k} unlike JSON.parse`)
  const { managedFields: _, ...rest } = meta
  const expected = { ...want, metadata: rest }
  let got: unknown
  try {
    got = JSON.parse(Buffer.from(stripped).toString('utf8'))
  } catch {
    throw new Finding('stripManagedFields left bytes that are not JSON')
  }
  if (sameValue(got, expected) === false)
    throw new Finding('stripManagedFields changed more than metadata.managedFields')
}

export const jsonScan: FuzzTarget = {
  name: 'json-scan',
  entry:
    'jsonCodec.scan / stripManagedFields / decode, decodeListBytes (items materialized), decodeEventBytes',
  dictionary: JSON_DICTIONARY,
  maxBytes: 64 * 1024,
  async open(): Promise<FuzzSession> {
    return {
      async run(input) {
        compare(input)
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
