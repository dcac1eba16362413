/**
 * @module kubeconfig-text — from a kubeconfig file to text the YAML reader may take: bounded in size, UTF-8, no control characters; an empty file told apart.
 *
 * client-go reads a kubeconfig whole, whatever its size, and go-yaml then refuses bytes that
 * are not UTF-8 and characters YAML does not allow (NUL and other controls). edgeop reads at
 * most {@link MAX_KUBECONFIG_BYTES} (never the whole of a larger file) and refuses the same
 * characters go-yaml does, naming the file, line and column.
 */
import { isUtf8 } from 'node:buffer'
import { formatByteLimit, readBoundedFile } from '../core/bounded-file.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { bytePosition, firstInvalidUtf8 } from '../core/utf8.ts'
import type { ReadTextFile } from './read-text-file.ts'

/**
 * Largest kubeconfig edgeop reads: 8 MiB. Real ones are a few KiB; a fleet file of 1,000
 * clusters, each with embedded CA and client certificate and key data (about 6 KiB per
 * entry), stays under 8 MiB, and parsing 8 MiB takes about 0.1 s and 10 MB. client-go has
 * no cap; without one a 50 MB `current-context` took over a second and hundreds of MB of RSS
 * before its error, and every byte is read before any check (docs/architecture.md, "Kubeconfig input").
 */
export const MAX_KUBECONFIG_BYTES = 8 * 1024 * 1024

/** Says what a kubeconfig normally is, after the size error. */
const TOO_LARGE_HINT = 'a kubeconfig is normally a few KiB: is this the right file?'

function tooLarge(file: string, bytes?: number): EdgeopError {
  const size = bytes === undefined ? '' : ` (${bytes} bytes)`
  return new EdgeopError(
    'EDGEOP_ERR_CONFIG',
    `kubeconfig ${file} is larger${size} than the ${formatByteLimit(MAX_KUBECONFIG_BYTES)} edgeop reads; ${TOO_LARGE_HINT}`,
    { step: 'read kubeconfig' },
  )
}

function textError(file: string, line: number, column: number, message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_YAML', `${file}:${line}:${column}: ${message}`, {
    step: 'read kubeconfig',
  })
}

/**
 * Reads the kubeconfig `file` as text. Without `readFile`, reads it through core's bounded reader
 * (at most {@link MAX_KUBECONFIG_BYTES} + 1 bytes, within its time limit, so neither `/dev/zero` nor
 * a silent FIFO holds it) and refuses bytes that are not UTF-8; with it (tests, virtual files),
 * checks the size of what it returns. Either way refuses the characters go-yaml refuses (see
 * {@link checkKubeconfigCharacters}).
 *
 * @throws the reader's `fs` error (with `code`) as it is; EdgeopError `EDGEOP_ERR_CONFIG` for a
 *   file over the cap or one that does not end in time, `EDGEOP_ERR_YAML` naming `file:line:column`
 *   for a refused byte or character.
 */
export async function readKubeconfigText(file: string, readFile?: ReadTextFile): Promise<string> {
  let text: string
  if (readFile) {
    text = await readFile(file, KUBECONFIG_LIMITS)
    const bytes = Buffer.byteLength(text)
    if (bytes > MAX_KUBECONFIG_BYTES) throw tooLarge(file, bytes)
  } else {
    let bytes: Buffer
    try {
      bytes = await readBoundedFile(file, KUBECONFIG_LIMITS)
    } catch (err) {
      // The kubeconfig layer's code for every kubeconfig it cannot use; the message names file and limit.
      if (isEdgeopError(err, 'EDGEOP_ERR_FILE'))
        throw new EdgeopError('EDGEOP_ERR_CONFIG', err.message, { step: 'read kubeconfig', cause: err })
      throw err
    }
    text = decodeUtf8(bytes, file)
  }
  checkKubeconfigCharacters(text, file)
  return text
}

/** The bounds of a kubeconfig read. */
const KUBECONFIG_LIMITS = { what: 'kubeconfig', maxBytes: MAX_KUBECONFIG_BYTES, hint: TOO_LARGE_HINT }

/** `bytes` as UTF-8 text; the first invalid sequence is an error at its line and column. */
function decodeUtf8(bytes: Buffer, file: string): string {
  if (isUtf8(bytes)) return bytes.toString('utf8')
  const at = firstInvalidUtf8(bytes)
  const { line, column } = bytePosition(bytes, at)
  const hex = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')
  throw textError(file, line, column, `invalid UTF-8 (byte 0x${hex}); a kubeconfig must be UTF-8 text`)
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
