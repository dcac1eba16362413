/**
 * @module read-text-file — the one file-reading seam of the config layer, injectable for tests; bounded by default.
 */
import { type BoundedReadOptions, readBoundedText } from '../core/bounded-file.ts'

/**
 * Reads a UTF-8 text file within `limits` (what the file is, for errors, and its size cap); rejects
 * with a Node `fs` error carrying `code` (e.g. `'ENOENT'`), or an `EDGEOP_ERR_FILE` EdgeopError
 * naming the file and the limit it broke. A test double may ignore `limits`.
 */
export type ReadTextFile = (file: string, limits?: BoundedReadOptions) => Promise<string>

/**
 * Cap of a certificate, key or CA bundle file: 8 MiB, the kubeconfig's own cap (a kubeconfig may
 * carry the same data inline). Distribution CA bundles are about 220 KiB (Debian's
 * ca-certificates.crt, 2026).
 */
export const MAX_PEM_FILE_BYTES = 8 * 1024 * 1024

/**
 * Cap of a bearer-token file: 1 MiB. The token travels in one HTTP header, and Go's `net/http`
 * server refuses request headers over 1 MiB in all (`http.DefaultMaxHeaderBytes`), so a larger token
 * could never authenticate. Service-account JWTs are about 1 KiB.
 */
export const MAX_TOKEN_FILE_BYTES = 1024 * 1024

/** The limits {@link readTextFile} applies when called without any: a PEM-sized `file`. */
const DEFAULT_LIMITS: BoundedReadOptions = { what: 'file', maxBytes: MAX_PEM_FILE_BYTES }

/** The default {@link ReadTextFile}: core's bounded reader (`readBoundedText`), so no file is read whole before its cap. */
export const readTextFile: ReadTextFile = (file, limits = DEFAULT_LIMITS) => readBoundedText(file, limits)
