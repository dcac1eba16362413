/**
 * @module lease — shared/exclusive use of the one control plane by concurrent test files.
 *
 * Every test file holds a lease while it runs. Ordinary files hold a `shared` lease and
 * run concurrently, each in its own namespace. A file that disrupts everyone (compacts
 * etcd, restarts an apiserver, stops etcd) asks for an `exclusive` lease: it waits
 * until the shared holders are done and nobody else starts meanwhile.
 *
 * Grants are first-come-first-served: a waiting exclusive request blocks later shared
 * requests (no starvation), and consecutive shared requests at the head are granted
 * together. A hook can run after an exclusive lease ends (the control plane uses it to
 * restart whatever the exclusive holder left stopped) before the next grant.
 */

/** The two kinds of use. */
export type LeaseMode = 'shared' | 'exclusive'

/** A granted lease. */
export interface Lease {
  readonly id: string
  readonly mode: LeaseMode
  /** Ends the lease. Calling it again is harmless. */
  release(): void
}

interface Waiter {
  mode: LeaseMode
  grant: (lease: Lease) => void
  reject: (err: unknown) => void
}

/** The queue of lease holders and waiters. */
export class LeaseQueue {
  readonly #holders = new Map<string, LeaseMode>()
  readonly #waiters: Waiter[] = []
  readonly #afterExclusive: (() => Promise<void>) | undefined
  #healing: Promise<void> | undefined
  #seq = 0

  /** `afterExclusive` runs (awaited, errors ignored) after each exclusive lease ends. */
  constructor(afterExclusive?: () => Promise<void>) {
    this.#afterExclusive = afterExclusive
  }

  /**
   * Waits for a lease of `mode`. Aborting `signal` withdraws the request (the promise
   * rejects with the signal's reason); an abort after the grant does nothing.
   */
  acquire(mode: LeaseMode, signal?: AbortSignal): Promise<Lease> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const waiter: Waiter = { mode, grant: resolve, reject }
      this.#waiters.push(waiter)
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.#waiters.indexOf(waiter)
          if (i >= 0) {
            this.#waiters.splice(i, 1)
            reject(signal.reason)
            this.#pump()
          }
        },
        { once: true },
      )
      this.#pump()
    })
  }

  /** The mode of an active lease, or undefined. */
  modeOf(id: string): LeaseMode | undefined {
    return this.#holders.get(id)
  }

  /** Number of active leases and of waiting requests. */
  get size(): { holders: number; waiting: number } {
    return { holders: this.#holders.size, waiting: this.#waiters.length }
  }

  #pump(): void {
    if (this.#healing !== undefined) return
    for (;;) {
      const head = this.#waiters[0]
      if (head === undefined) return
      const modes = [...this.#holders.values()]
      const free = head.mode === 'exclusive' ? modes.length === 0 : !modes.includes('exclusive')
      if (!free) return
      this.#waiters.shift()
      head.grant(this.#lease(head.mode))
    }
  }

  #lease(mode: LeaseMode): Lease {
    const id = `${mode}-${++this.#seq}`
    this.#holders.set(id, mode)
    return {
      id,
      mode,
      release: () => {
        if (!this.#holders.delete(id)) return
        if (mode === 'exclusive' && this.#afterExclusive !== undefined) {
          this.#healing = this.#afterExclusive()
            .catch(() => {})
            .finally(() => {
              this.#healing = undefined
              this.#pump()
            })
        } else {
          this.#pump()
        }
      },
    }
  }
}
