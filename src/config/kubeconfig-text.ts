/**
 * @module kubeconfig-text — from a kubeconfig file to text the YAML reader may take: bounded in size, UTF-8, no control characters; an empty file told apart.
 *
 * client-go reads a kubeconfig whole, whatever its size, and go-yaml then refuses bytes that
 * are not UTF-8 and characters YAML does not allow (NUL and other controls). edgeop reads at
 * most {@link MAX_KUBECONFIG_BYTES} (never the whole of a larger file) and refuses the same
 * characters go-yaml does, naming the file, line and column.
 */
import { isUtf8 } from 'node:buffer'
import { open } from 'node:fs/promises'
import { EdgeopError } from '../core/errors.ts'
import type { ReadTextFile } from './read-text-file.ts'

/**
 * Largest kubeconfig edgeop reads: 8 MiB. Real ones are a few KiB; a fleet file of 1,000
 * clusters, each with embedded CA and client certificate and key data (about 6 KiB per
 * entry), stays under 8 MiB, and parsing 8 MiB takes about 0.1 s and 10 MB. client-go has
 * no cap; without one a 50 MB `current-context` took 1.1 s and 253 MB RSS here before its
 * error (issue 14 saw 2 GB and 8 s), and every byte is read before any check.
 */
export const MAX_KUBECONFIG_BYTES = 8 * 1024 * 1024

const MIB = 1024 * 1024

function tooLarge(file: string, bytes?: number): EdgeopError {
  const size = bytes === undefined ? '' : ` (${bytes} bytes)`
  return new EdgeopError(
    'EDGEOP_ERR_CONFIG',
    `kubeconfig ${file} is larger${size} than the ${MAX_KUBECONFIG_BYTES / MIB} MiB edgeop reads; ` +
      'a kubeconfig is normally a few KiB: is this the right file?',
    { step: 'read kubeconfig' },
  )
}

function textError(file: string, line: number, column: number, message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_YAML', `${file}:${line}:${column}: ${message}`, {
    step: 'read kubeconfig',
  })
}

/**
 * Reads the kubeconfig `file` as text. Without `readFile`, reads at most
 * {@link MAX_KUBECONFIG_BYTES} + 1 bytes and refuses bytes that are not UTF-8; with it (tests,
 * virtual files), checks the size of what it returns. Either way refuses the characters
 * go-yaml refuses (see {@link checkKubeconfigCharacters}).
 *
 * @throws the reader's `fs` error (with `code`) as it is; EdgeopError `EDGEOP_ERR_CONFIG` for a
 *   file over the cap, `EDGEOP_ERR_YAML` naming `file:line:column` for a refused byte or character.
 */
export async function readKubeconfigText(file: string, readFile?: ReadTextFile): Promise<string> {
  let text: string
  if (readFile) {
    text = await readFile(file)
    const bytes = Buffer.byteLength(text)
    if (bytes > MAX_KUBECONFIG_BYTES) throw tooLarge(file, bytes)
  } else {
    text = decodeUtf8(await readBounded(file), file)
  }
  checkKubeconfigCharacters(text, file)
  return text
}

/** The first MAX_KUBECONFIG_BYTES bytes of `file`; more than that is an error (the rest is never read). */
async function readBounded(file: string): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const buf = Buffer.allocUnsafe(MAX_KUBECONFIG_BYTES + 1)
    let length = 0
    while (length < buf.length) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (length > MAX_KUBECONFIG_BYTES) throw tooLarge(file)
    return buf.subarray(0, length)
  } finally {
    await handle.close()
  }
}

/** `bytes` as UTF-8 text; the first invalid sequence is an error at its line and column. */
function decodeUtf8(bytes: Buffer, file: string): string {
  if (isUtf8(bytes)) return bytes.toString('utf8')
  const at = firstInvalidUtf8(bytes)
  const before = bytes.subarray(0, at)
  const lineStart = before.lastIndexOf(0x0a) + 1
  const line = before.reduce((n, b) => (b === 0x0a ? n + 1 : n), 1)
  const column = [...before.subarray(lineStart).toString('utf8')].length + 1
  const hex = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')
  throw textError(file, line, column, `invalid UTF-8 (byte 0x${hex}); a kubeconfig must be UTF-8 text`)
}

/** Offset of the first byte that does not start a valid UTF-8 sequence (Go `utf8.Valid` rules), or the length. */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  while (i < b.length) {
    const c = b[i] ?? 0
    if (c < 0x80) {
      i++
      continue
    }
    // Sequence length and the allowed range of the second byte (no overlongs, no surrogates, ≤ U+10FFFF).
    let n = 0
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) n = 2
    else if (c >= 0xe0 && c <= 0xef) {
      n = 3
      if (c === 0xe0) lo = 0xa0
      if (c === 0xed) hi = 0x9f
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4
      if (c === 0xf0) lo = 0x90
      if (c === 0xf4) hi = 0x8f
    } else return i
    if (i + n > b.length) return i
    const second = b[i + 1] ?? 0
    if (second < lo || second > hi) return i
    for (let k = 2; k < n; k++) {
      const next = b[i + k] ?? 0
      if (next < 0x80 || next > 0xbf) return i
    }
    i += n
  }
  return b.length
}

/**
 * Offset of the first character go-yaml refuses ("control characters are not allowed"), or -1:
 * C0 controls but tab, LF and CR; DEL; C1 controls but NEL; lone surrogates; U+FFFE and U+FFFF.
 * A loop over UTF-16 units (8 MiB in a few ms).
 */
function firstRefused(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20) {
      if (c !== 0x09 && c !== 0x0a && c !== 0x0d) return i
    } else if (c >= 0x7f && c <= 0x9f) {
      if (c !== 0x85) return i
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return i
      i++
    } else if ((c >= 0xdc00 && c <= 0xdfff) || c === 0xfffe || c === 0xffff) return i
  }
  return -1
}

/** Throws at the first character go-yaml would refuse, naming `file:line:column` and its code point. */
export function checkKubeconfigCharacters(text: string, file: string): void {
  const at = firstRefused(text)
  if (at < 0) return
  const before = text.slice(0, at)
  const lineStart = before.lastIndexOf('\n') + 1
  const line = before.split('\n').length
  const column = [...before.slice(lineStart)].length + 1
  const unit = text.charCodeAt(at)
  const code = unit.toString(16).toUpperCase().padStart(4, '0')
  const kind = unit === 0 ? 'a NUL character' : unit >= 0xd800 ? 'character' : 'control character'
  const what = unit === 0 ? `${kind} (U+0000)` : `${kind} U+${code}`
  throw textError(file, line, column, `${what} is not allowed in YAML`)
}

/** True when `text` holds nothing but blanks, line breaks and comments (an empty kubeconfig). */
export function isBlankKubeconfig(text: string): boolean {
  return /^(?:[ \t\r\n\uFEFF]|#[^\n]*)*$/.test(text)
}
