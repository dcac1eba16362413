/**
 * @module scratch — temporary directories a test file removes when it ends, and an environment
 * without Go, for the tests of the build tools' scripts.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'

/**
 * A function that makes a fresh directory under the system temp dir, named `<prefix>…`; every one
 * made is removed after the file's tests. Call at the top level of a test file.
 */
export function scratchDirs(prefix: string): () => Promise<string> {
  const made: string[] = []
  after(async () => {
    for (const d of made) await rm(d, { recursive: true, force: true })
  })
  return async () => {
    const d = await mkdtemp(join(tmpdir(), prefix))
    made.push(d)
    return d
  }
}

/** An environment whose PATH has bash and coreutils but no Go, plus `extra`. */
export const noGo = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  ...extra,
})
