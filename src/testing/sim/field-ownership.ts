/**
 * @module field-ownership — server-side apply's field managers: who owns which field, conflicts, and
 * the removal of fields a manager stops applying.
 *
 * The model tracks leaf fields (a map is walked, a list is one atomic field), which is the level the
 * reference operators use: one manager per child, `force: true`, whole lists. Real structured-merge
 * merges lists by key (`containers` by `name`); see docs/simulation.md for that divergence.
 */
import type { Json } from './patches.ts'

/** Field paths per manager of one object. */
export type Ownership = Map<string, Set<string>>

const SEP = '\u0000'
const isMap = (v: unknown): v is Record<string, Json> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** Metadata fields no manager owns (set by the server or identifying the object). */
const UNOWNED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'managedFields',
])

/** The leaf paths of `obj` a manager can own (`status` only when `status` is true). */
export function leafPaths(obj: Json, status: boolean): string[] {
  const out: string[] = []
  const walk = (v: Json, path: string[]): void => {
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, child] of Object.entries(v)) walk(child, [...path, k])
    } else out.push(path.join(SEP))
  }
  if (!isMap(obj)) return out
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue
    if ((k === 'status') !== status) continue
    if (k === 'metadata' && isMap(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!UNOWNED_METADATA.has(mk)) walk(mv, ['metadata', mk])
    } else walk(v, [k])
  }
  return out
}

/** The value at a leaf path, or undefined. */
export function valueAt(obj: Json, path: string): Json | undefined {
  let cur: Json | undefined = obj
  for (const k of path.split(SEP)) cur = isMap(cur) ? cur[k] : undefined
  return cur
}

/** Removes the field at `path` (and maps left empty by it) from `obj`, in place. */
export function removeAt(obj: Json, path: string): void {
  const keys = path.split(SEP)
  const chain: Record<string, Json>[] = []
  let cur: Json | undefined = obj
  for (const k of keys.slice(0, -1)) {
    if (!isMap(cur)) return
    chain.push(cur)
    cur = cur[k]
  }
  if (!isMap(cur)) return
  delete cur[keys[keys.length - 1] as string]
  for (let i = chain.length - 1; i >= 0 && isMap(cur) && Object.keys(cur).length === 0; i--) {
    delete (chain[i] as Record<string, Json>)[keys[i] as string]
    cur = chain[i]
  }
}

/** `live` with `applied` merged in: maps merged key by key, everything else replaced. */
export function deepMerge(live: Json | undefined, applied: Json): Json {
  if (!isMap(applied) || !isMap(live)) return structuredClone(applied)
  const out: Record<string, Json> = { ...live }
  for (const [k, v] of Object.entries(applied)) out[k] = deepMerge(out[k], v)
  return out
}

/** Fields of other managers that `applied` would change, as `manager: path` strings (the 409's causes). */
export function applyConflicts(
  owners: Ownership,
  manager: string,
  live: Json,
  applied: Json,
  paths: string[],
): string[] {
  const out: string[] = []
  for (const p of paths) {
    const v = JSON.stringify(valueAt(applied, p))
    for (const [m, owned] of owners) {
      if (m !== manager && owned.has(p) && JSON.stringify(valueAt(live, p)) !== v)
        out.push(`${m}: .${p.replaceAll(SEP, '.')}`)
    }
  }
  return out
}

/**
 * Records an apply by `manager` of `paths`: they move to it (from every other manager: the caller
 * checked for conflicts or forced), and fields it owned before and no longer applies are returned
 * for removal when no one else owns them.
 */
export function recordApply(owners: Ownership, manager: string, paths: string[]): string[] {
  const next = new Set(paths)
  for (const [m, owned] of owners) if (m !== manager) for (const p of next) owned.delete(p)
  const before = owners.get(manager) ?? new Set()
  owners.set(manager, next)
  const orphaned: string[] = []
  for (const p of before) {
    if (next.has(p)) continue
    let other = false
    for (const [m, owned] of owners) if (m !== manager && owned.has(p)) other = true
    if (!other) orphaned.push(p)
  }
  dropEmpty(owners)
  return orphaned
}

/** Records a non-apply write by `manager`: every leaf it changed (or added) becomes its own. */
export function recordUpdate(
  owners: Ownership,
  manager: string,
  before: Json | undefined,
  after: Json,
  status: boolean,
): void {
  const changed = leafPaths(after, status).filter(
    (p) => before === undefined || JSON.stringify(valueAt(before, p)) !== JSON.stringify(valueAt(after, p)),
  )
  if (changed.length === 0) return
  for (const [m, owned] of owners) if (m !== manager) for (const p of changed) owned.delete(p)
  const mine = owners.get(manager) ?? new Set<string>()
  for (const p of changed) mine.add(p)
  owners.set(manager, mine)
  dropEmpty(owners)
}

function dropEmpty(owners: Ownership): void {
  for (const [m, owned] of owners) if (owned.size === 0) owners.delete(m)
}
