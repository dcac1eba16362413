/**
 * @module chunked — a byte stream cut at given offsets, as a network delivers it.
 */

/** `bytes` as chunks cut at `cuts` (ascending); each chunk's buffer is overwritten once consumed, so a decoder must copy what it keeps. */
export async function* chunked(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let prev = 0
  for (const c of [...cuts, bytes.length]) {
    const buf = new Uint8Array(c - prev)
    buf.set(bytes.subarray(prev, c))
    yield buf
    buf.fill(0x7a)
    prev = c
  }
}
