/**
 * @module convert — AppService v1alpha1 ⇄ v1beta1, without loss, for the CRD's conversion webhook. Pure.
 *
 * Only `spec.database` differs. v1beta1 → v1alpha1 is exact: `{engine, size}` is
 * `{enabled: true, class: '<engine>-<size>'}`, no database is no database. v1alpha1 → v1beta1 keeps
 * what v1beta1 can say: an enabled database whose class is `<engine>-<size>` becomes that engine and
 * size, any other class the default engine and size, a disabled one none. Whatever that loses (a
 * class of another name, `enabled: false` with a class, an empty `database`) is kept verbatim in the
 * annotation {@link V1ALPHA1_FIELDS_ANNOTATION}, and converting back restores it as long as it still
 * describes the v1beta1 database (the object was not edited to another engine or size since); a
 * stale or unreadable annotation is dropped. So a round trip either way gives back the object
 * exactly — metadata, status and every other field untouched — for objects that do not carry the
 * annotation themselves (it is reserved).
 */
import type { KubeObject } from '../../core/index.ts'
import {
  type AppServiceSpec,
  type AppServiceSpecV1beta1,
  DATABASE_ENGINES,
  DATABASE_SIZES,
  GROUP,
  VERSION,
  VERSION_V1BETA1,
} from './api.ts'

/** Holds v1alpha1's `spec.database` while the object is seen as v1beta1, as JSON `{"database": …}`. */
export const V1ALPHA1_FIELDS_ANNOTATION = `${GROUP}/v1alpha1-fields`

type AlphaDb = AppServiceSpec['database']
type BetaDb = AppServiceSpecV1beta1['database']

/** The engine and size of a v1alpha1 database whose class names none (the first of each list). */
const DEFAULT_DB = { engine: DATABASE_ENGINES[0], size: DATABASE_SIZES[0] }
const CLASS = new RegExp(`^(${DATABASE_ENGINES.join('|')})-(${DATABASE_SIZES.join('|')})$`)

const toBetaDb = (d: AlphaDb | undefined): BetaDb | undefined => {
  if (d?.enabled !== true) return undefined
  const m = CLASS.exec(d.class ?? '')
  return m ? ({ engine: m[1], size: m[2] } as NonNullable<BetaDb>) : { ...DEFAULT_DB }
}
const toAlphaDb = (d: BetaDb | undefined): AlphaDb | undefined =>
  d && { enabled: true, class: `${d.engine}-${d.size}` }
/** Equal databases (flat objects), whatever their keys' order (the apiserver sorts them). */
const same = (a: unknown, b: unknown) => {
  const canon = (v: unknown) => JSON.stringify(v && Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
  return canon(a) === canon(b)
}

/**
 * `object` (an AppService of this group, v1alpha1 or v1beta1) as `apiVersion` (`<group>/<version>`,
 * any group: a CRD of another group with these schemas converts the same). A copy; the input is not
 * changed. Same version: returned as is.
 *
 * @throws Error naming the version when either version is neither v1alpha1 nor v1beta1.
 */
export function convertAppService(object: KubeObject, apiVersion: string): KubeObject {
  const from = object.apiVersion?.split('/').pop()
  const to = apiVersion.split('/').pop()
  if (from === to) return object
  for (const v of [from, to])
    if (v !== VERSION && v !== VERSION_V1BETA1) throw new Error(`cannot convert AppService version ${v}`)
  const out = structuredClone(object) as KubeObject & { spec?: Record<string, unknown> }
  out.apiVersion = apiVersion
  const spec = out.spec ?? {}
  const annotations = { ...out.metadata.annotations }
  const saved = annotations[V1ALPHA1_FIELDS_ANNOTATION]
  delete annotations[V1ALPHA1_FIELDS_ANNOTATION]
  let db: unknown
  if (to === VERSION_V1BETA1) {
    const alpha = spec.database as AlphaDb | undefined
    db = toBetaDb(alpha)
    if (!same(toAlphaDb(db as BetaDb), alpha))
      annotations[V1ALPHA1_FIELDS_ANNOTATION] = JSON.stringify({ database: alpha ?? null })
  } else {
    db = toAlphaDb(spec.database as BetaDb | undefined)
    let restored: { database?: AlphaDb | null } | undefined
    try {
      restored = saved === undefined ? undefined : JSON.parse(saved)
    } catch {}
    if (restored && same(toBetaDb(restored.database ?? undefined), spec.database))
      db = restored.database ?? undefined
  }
  if (db === undefined) delete spec.database
  else spec.database = db
  if (Object.keys(annotations).length) out.metadata.annotations = annotations
  else delete out.metadata.annotations
  return out
}
