/**
 * @module review-header — the `apiVersion`, `kind` and `request.uid` of an admission or conversion
 * review, read from its bytes without parsing the rest: enough to answer a review that may not be
 * parsed (one nested too deep) with a refusal the apiserver shows the user, instead of a bare 400.
 */
import { eachMember, keyIs, readValue, skipValue } from '../codec/json-scan.ts'

/** What identifies a review; each field undefined when absent, not a string, or unreadable. */
export interface ReviewHeader {
  /** Top-level `apiVersion`. */
  apiVersion?: string
  /** Top-level `kind`. */
  kind?: string
  /** `request.uid`, echoed by any answer. */
  uid?: string
}

/**
 * Reads the header of the review in `bytes`. Iterative over nesting (the scanner skips containers by
 * counting brackets), so any depth is safe; never throws.
 */
export function reviewHeader(bytes: Uint8Array): ReviewHeader {
  const out: ReviewHeader = {}
  const end = bytes.length
  const text = (s: number): [string | undefined, number] => {
    const e = skipValue(bytes, s, end)
    const v = bytes[s] === 0x22 ? readValue(bytes, s, e) : undefined
    return [typeof v === 'string' ? v : undefined, e]
  }
  try {
    eachMember(bytes, 0, end, (m, b) => {
      for (const key of ['apiVersion', 'kind'] as const) {
        if (!keyIs(b, m.keyStart, m.keyEnd, key)) continue
        const [v, e] = text(m.valueStart)
        if (v !== undefined) out[key] = v
        return e
      }
      if (!keyIs(b, m.keyStart, m.keyEnd, 'request') || b[m.valueStart] !== 0x7b) return undefined
      return eachMember(b, m.valueStart, end, (r) => {
        if (!keyIs(b, r.keyStart, r.keyEnd, 'uid')) return undefined
        const [v, e] = text(r.valueStart)
        if (v !== undefined) out.uid = v
        return e
      })
    })
  } catch {
    // Malformed JSON: whatever was read before the fault stands.
  }
  return out
}
