/**
 * @module watch-decoder — fuzz target: JSON watch streams (`decodeWatchStream`, with and without
 * `keepBytes`, every object materialized), delivered in chunks of a size the input chooses.
 *
 * Answered: events, or an `EdgeopError` `EDGEOP_ERR_DECODE` ending the stream.
 */
import { decodeWatchStream } from '../../../src/client/watch-decoder.ts'
import { materialize } from '../../../src/core/wire-object.ts'
import { allowOnly, chunksOf, type FuzzSession, type FuzzTarget } from '../harness.ts'
import { JSON_DICTIONARY } from './json-scan.ts'

/** A short line cap, so the fuzzer reaches the too-long-line path with small inputs. */
const MAX_LINE_BYTES = 4 * 1024

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
        for (const keepBytes of [false, true]) {
          try {
            for await (const e of decodeWatchStream(chunksOf(input), {
              keepBytes,
              maxLineBytes: MAX_LINE_BYTES,
            }))
              materialize(e.object)
          } catch (err) {
            allowOnly(err, ['EDGEOP_ERR_DECODE'])
          }
        }
      },
      async close() {},
    }
  },
}
