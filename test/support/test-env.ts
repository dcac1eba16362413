/**
 * @module test-env — the prelude of an integration test file: the control plane for its tests, and
 * the cleanups that run after them.
 *
 * ```ts
 * const { env, defer } = useTestEnv()               // or useTestEnv({ exclusive: true })
 * before(async () => {
 *   client = adminClient(env(), env().server)
 *   defer(() => client.close())
 * })
 * ```
 */
import { after, before } from 'node:test'
import { getTestEnv, type TestEnv, type TestEnvOptions } from '../controlplane/env.ts'

/** A cleanup; what it returns (or rejects with) is ignored. */
export type Cleanup = () => unknown

/** What {@link useTestEnv} gives a test file. */
export interface TestEnvSuite {
  /** The control plane. Throws when called before the file's first `before` hook has run. */
  env(): TestEnv
  /**
   * Runs `cleanups` after the file's tests: the last one deferred first (so `defer(a, b)` runs b, then
   * a), each awaited, a failing one ignored so that the others still run.
   */
  defer(...cleanups: Cleanup[]): void
}

/**
 * Registers, at the top level of a test file, a `before` hook taking the control plane
 * (`getTestEnv(options)`, so `{ exclusive: true }` keeps its meaning) and an `after` hook running the
 * deferred cleanups. Call it before the file registers its own hooks, so they run with `env()` ready.
 */
export function useTestEnv(options: TestEnvOptions = {}): TestEnvSuite {
  let current: TestEnv | undefined
  const cleanups: Cleanup[] = []
  before(async () => {
    current = await getTestEnv(options)
  })
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup()
      } catch {
        // a cleanup that fails must not keep the others from running
      }
    }
  })
  return {
    env() {
      if (current === undefined) throw new Error('useTestEnv: env() was called before the before() hook ran')
      return current
    },
    defer(...more) {
      cleanups.push(...more)
    },
  }
}
