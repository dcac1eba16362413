/**
 * @module kubeconfig-text — from a kubeconfig file to text the YAML reader may take: bounded in size; an empty file told apart.
 *
 * client-go reads a kubeconfig whole, whatever its size. edgeop reads at most
 * {@link MAX_KUBECONFIG_BYTES} and never the whole of a larger file.
 */
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

/**
 * Reads the kubeconfig `file` as UTF-8 text. Without `readFile`, reads at most
 * {@link MAX_KUBECONFIG_BYTES} + 1 bytes; with it (tests, virtual files), checks the size of
 * what it returns.
 *
 * @throws the reader's `fs` error (with `code`) as it is; EdgeopError `EDGEOP_ERR_CONFIG` for a
 *   file over the cap.
 */
export async function readKubeconfigText(file: string, readFile?: ReadTextFile): Promise<string> {
  let text: string
  if (readFile) {
    text = await readFile(file)
    const bytes = Buffer.byteLength(text)
    if (bytes > MAX_KUBECONFIG_BYTES) throw tooLarge(file, bytes)
  } else {
    text = (await readBounded(file)).toString('utf8')
  }
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

/** True when `text` holds nothing but blanks, line breaks and comments (an empty kubeconfig). */
export function isBlankKubeconfig(text: string): boolean {
  return /^(?:[ \t\r\n\uFEFF]|#[^\n]*)*$/.test(text)
}
