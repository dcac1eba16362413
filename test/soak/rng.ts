/**
 * @module rng — a small seeded pseudo-random generator (sfc32), so a soak with the same
 * seed makes the same choices: the same fault schedule, the same sequence of edits.
 */

/** A seeded random source. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number
  /** Uniform in [min, max). */
  between(min: number, max: number): number
  /** True with probability `p`. */
  chance(p: number): boolean
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T
  /** One key chosen with probability proportional to its weight (weights ≥ 0, not all 0). */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K
  /** An independent generator derived from this seed and `label`. */
  fork(label: string): Rng
}

/** 32-bit FNV-1a of a string: turns labels into seed material. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** sfc32 (Chris Doty-Humphrey's Small Fast Counting generator), seeded from `seed` and `label`. */
export function createRng(seed: number, label = 'root'): Rng {
  let a = seed >>> 0
  let b = fnv1a(label)
  let c = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ fnv1a(`${label}/c`)) >>> 0
  let d = 1
  const raw = (): number => {
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 15; i++) raw() // mix the seed in
  const rng: Rng = {
    next: raw,
    int: (min, max) => min + Math.floor(raw() * (max - min + 1)),
    between: (min, max) => min + raw() * (max - min),
    chance: (p) => raw() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('rng.pick: empty list')
      return items[Math.floor(raw() * items.length)] as T
    },
    weighted: <K extends string>(weights: Readonly<Record<K, number>>): K => {
      const entries = Object.entries(weights) as [K, number][]
      const total = entries.reduce((s, [, w]) => s + Math.max(0, w), 0)
      if (!(total > 0)) throw new Error('rng.weighted: no positive weight')
      let x = raw() * total
      for (const [k, w] of entries) {
        x -= Math.max(0, w)
        if (x < 0) return k
      }
      return entries[entries.length - 1]![0]
    },
    fork: (sub) => createRng(seed, `${label}/${sub}`),
  }
  return rng
}
