/**
 * @module prng — the simulator's one source of randomness: a seeded, splittable generator, so a seed replays a run exactly.
 */

/**
 * A 32-bit seeded generator (mulberry32: a 32-bit state stepped by a Weyl increment and mixed by
 * two multiplies; see Tommy Ettinger's public-domain mulberry32). Fast and good enough for choosing
 * schedules and faults; not for cryptography.
 *
 * Guarantees: the same seed gives the same sequence on every platform (integer arithmetic only).
 */
export class Prng {
  #state: number

  /** A generator for `seed` (any integer; it is reduced to 32 bits). */
  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** The next number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }

  /** An independent generator derived from this one (so adding draws in one place does not shift another's). */
  fork(): Prng {
    return new Prng(Math.floor(this.next() * 4_294_967_296))
  }
}
