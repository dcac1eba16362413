/**
 * @module watch-decoder — fuzz target: JSON watch streams (`decodeWatchStream`, with and without
 * `keepBytes`, every object materialized), delivered in chunks of a size the input chooses.
 *
 * Answered: events, or an `EdgeopError` `EDGEOP_ERR_DECODE` ending the stream; and three paths agree on
 * the events (without managedFields) and on a refusal: eager decoding of the whole input as one chunk,
 * eager decoding in chunks, and `keepBytes` stubs in chunks (materialized at once). Two differences are
 * by design and allowed: `keepBytes` may accept a line the eager path refuses, when the bad JSON is in
 * bytes it cuts unread (`metadata.managedFields`; json-scan checks structure, not the grammar it skips);
 * and it refuses a metadata field of the wrong type (`metadata.name is not a string`), which its scan
 * reads and the eager path passes through as it is.
 */
import { decodeWatchStream } from '../../../src/codec/json-watch-decoder.ts'
import { materialize } from '../../../src/core/encoded-object.ts'
import {
  agree,
  chunksOf,
  decoded,
  type FuzzSession,
  type FuzzTarget,
  withoutManagedFields,
} from '../harness.ts'
import { JSON_DICTIONARY } from './json-scan.ts'

/** A short line cap, so the fuzzer reaches the too-long-line path with small inputs. */
const MAX_LINE_BYTES = 4 * 1024

/** The scanner's refusal of a metadata field of the wrong type (json-codec.ts `readMetaField`). */
const METADATA_TYPE = /metadata\.\w+ is not an? (string|number|object|array)\)$/

async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes
}

export const watchDecoder: FuzzTarget = {
  name: 'watch-decoder',
  entry: 'decodeWatchStream (keepBytes false and true; objects materialized), chunked by the input',
  dictionary: [
    ...JSON_DICTIONARY,
    '\n',
    '\r\n',
    '{"type":"ADDED","object":',
    '{"type":"ERROR","object":{"code":410}}',
  ],
  maxBytes: 64 * 1024,
  async open(): Promise<FuzzSession> {
    return {
      async run(input) {
        const events = (chunks: AsyncIterable<Uint8Array>, keepBytes: boolean) =>
          decoded(async () => {
            const out: unknown[] = []
            for await (const e of decodeWatchStream(chunks, { keepBytes, maxLineBytes: MAX_LINE_BYTES }))
              out.push({ type: e.type, object: withoutManagedFields(materialize(e.object)) })
            return out
          })
        const whole = await events(oneChunk(input), false)
        agree('whole and chunked', whole, await events(chunksOf(input), false))
        const stubs = await events(chunksOf(input), true)
        const cutUnread = 'refused' in whole && 'value' in stubs
        const typeChecked = 'value' in whole && 'refused' in stubs && METADATA_TYPE.test(stubs.refused)
        if (!cutUnread && !typeChecked) agree('eager and keepBytes', whole, stubs)
      },
      async close() {},
    }
  },
}
