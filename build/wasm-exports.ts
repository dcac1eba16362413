/**
 * @module build/wasm-exports — a WebAssembly module with only the exports a caller uses.
 *
 * Rewrites the export section (id 7) of a binary module and copies every other section byte for
 * byte (WebAssembly core spec, "Binary format: modules"). The functions behind dropped exports
 * stay in the code section: this removes names, not code.
 */

const EXPORT_SECTION = 7
const HEADER_BYTES = 8 // "\0asm" and the version

/** Unsigned LEB128, as the binary format encodes sizes and counts. */
function leb128(n: number): number[] {
  const out: number[] = []
  let rest = n
  do {
    let byte = rest & 0x7f
    rest >>>= 7
    if (rest !== 0) byte |= 0x80
    out.push(byte)
  } while (rest !== 0)
  return out
}

/** Reads an unsigned LEB128 at `pos`; returns the value and the position after it. */
function readLeb128(buf: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0
  let shift = 0
  let p = pos
  for (;;) {
    const byte = buf[p++]
    if (byte === undefined) throw new Error('wasm: truncated LEB128')
    value += (byte & 0x7f) * 2 ** shift
    shift += 7
    if ((byte & 0x80) === 0) return [value, p]
  }
}

/**
 * `wasm` with an export section that holds only the exports named in `keep`. Throws when a name in
 * `keep` is not exported (so a caller's new need fails the build, not the first request).
 */
export function keepExports(wasm: Uint8Array, keep: ReadonlySet<string>): Buffer {
  const parts: Uint8Array[] = [wasm.subarray(0, HEADER_BYTES)]
  const found = new Set<string>()
  let pos = HEADER_BYTES
  while (pos < wasm.length) {
    const start = pos
    const id = wasm[pos++]
    const [size, body] = readLeb128(wasm, pos)
    const end = body + size
    if (id !== EXPORT_SECTION) {
      parts.push(wasm.subarray(start, end))
      pos = end
      continue
    }
    let [count, p] = readLeb128(wasm, body)
    const kept: Uint8Array[] = []
    for (; count > 0; count--) {
      const entryStart = p
      const [nameLength, nameStart] = readLeb128(wasm, p)
      const name = Buffer.from(wasm.subarray(nameStart, nameStart + nameLength)).toString('utf8')
      p = readLeb128(wasm, nameStart + nameLength + 1)[1] // kind byte, then the index
      if (keep.has(name)) {
        kept.push(wasm.subarray(entryStart, p))
        found.add(name)
      }
    }
    const content = Buffer.concat([Buffer.from(leb128(kept.length)), ...kept])
    parts.push(Buffer.from([EXPORT_SECTION, ...leb128(content.length)]), content)
    pos = end
  }
  const missing = [...keep].filter((name) => !found.has(name))
  if (missing.length > 0) throw new Error(`wasm: no export named ${missing.join(', ')}`)
  return Buffer.concat(parts)
}
