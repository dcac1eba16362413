/**
 * @module read-text-file — the one file-reading seam of the config layer, injectable for tests.
 */
import { readFile } from 'node:fs/promises'

/** Reads a UTF-8 text file; rejects with a Node `fs` error carrying `code` (e.g. `'ENOENT'`). */
export type ReadTextFile = (file: string) => Promise<string>

/** The default {@link ReadTextFile}: `fs.promises.readFile(file, 'utf8')`. */
export const readTextFile: ReadTextFile = (file) => readFile(file, 'utf8')
