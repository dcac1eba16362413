/**
 * @module test-env — the prelude of an integration test file: the control plane for its tests, and
 * the cleanups that run after them.
 *
 * ```ts
 * const { env, setup, defer } = useTestEnv()        // or useTestEnv({ exclusive: true })
 * setup(async () => {
 *   client = adminClient(env(), env().server)
 *   defer(() => client.close())
 * })
 * ```
 *
 * A file's set-up goes into `setup`, not into a plain `before`: node:test starts top-level
 * `before` hooks as they are registered, without waiting for the earlier ones, so a plain
 * `before` could run before the control plane is there. Tests and `after` hooks do wait.
 */
import { after, before } from 'node:test'
import { getTestEnv, type TestEnv, type TestEnvOptions } from '../controlplane/env.ts'

/** A cleanup; what it returns (or rejects with) is ignored. */
export type Cleanup = () => unknown

/** What {@link useTestEnv} gives a test file. */
export interface TestEnvSuite {
  /** The control plane. Throws when called before it is there (outside tests and {@link TestEnvSuite.setup}). */
  env(): TestEnv
  /** Registers `fn` as a `before` hook that runs once {@link TestEnvSuite.env} is there. */
  setup(fn: () => unknown): void
  /**
   * Runs `cleanups` after the file's tests: the last one deferred first (so `defer(a, b)` runs b, then
   * a), each awaited, a failing one ignored so that the others still run.
   */
  defer(...cleanups: Cleanup[]): void
}

/**
 * Registers, at the top level of a test file, a `before` hook taking the control plane
 * (`getTestEnv(options)`, so `{ exclusive: true }` keeps its meaning) and an `after` hook running the
 * deferred cleanups.
 */
export function useTestEnv(options: TestEnvOptions = {}): TestEnvSuite {
  let current: TestEnv | undefined
  const cleanups: Cleanup[] = []
  const acquire = async (): Promise<void> => {
    // getTestEnv returns the same environment to every call in a process.
    current = await getTestEnv(options)
  }
  before(acquire)
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
      if (current === undefined)
        throw new Error('useTestEnv: env() was called before the control plane was there; use setup()')
      return current
    },
    setup(fn) {
      before(async () => {
        await acquire()
        await fn()
      })
    },
    defer(...more) {
      cleanups.push(...more)
    },
  }
}
