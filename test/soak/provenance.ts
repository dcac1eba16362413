/**
 * @module provenance — which build a soak ran: the artifact's digest and the source commit.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ARTIFACT } from '../support/operator-process.ts'

/** First 12 hex digits of the artifact's sha256. */
export function artifactDigest(): string {
  try {
    return createHash('sha256').update(readFileSync(ARTIFACT)).digest('hex').slice(0, 12)
  } catch {
    return 'unknown'
  }
}

/** `git rev-parse --short HEAD` of the tree the soak runs from, `+dirty` when src/ has changes. */
export function sourceCommit(): string {
  try {
    const cwd = join(import.meta.dirname, '../..')
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', 'src'], { cwd, encoding: 'utf8' }).trim()
    return dirty === '' ? head : `${head}+dirty`
  } catch {
    return 'unknown'
  }
}
