/**
 * @module selectors — label and field selectors as the API server evaluates them on a list or watch.
 */
import type { KubeObject } from '../../core/types.ts'

type Requirement = (labels: Record<string, string>) => boolean

/**
 * A label selector in apimachinery `labels.Parse` syntax (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, joined by commas) as a predicate; undefined when it does not parse.
 */
export function parseLabelSelector(selector: string): ((obj: KubeObject) => boolean) | undefined {
  const reqs: Requirement[] = []
  for (const term of splitTerms(selector)) {
    const t = term.trim()
    if (t === '') continue
    let m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t)
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string]
      const values = new Set(list.split(',').map((v) => v.trim()))
      reqs.push(op === 'in' ? (l) => values.has(l[key] as string) : (l) => !values.has(l[key] as string))
      continue
    }
    m = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s,]*)$/.exec(t)
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string]
      reqs.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value)
      continue
    }
    m = /^(!?)([^\s!=(),]+)$/.exec(t)
    if (!m) return undefined
    const [, not, key] = m as unknown as [string, string, string]
    reqs.push(not ? (l) => !(key in l) : (l) => key in l)
  }
  return (obj) => {
    const labels = obj.metadata.labels ?? {}
    return reqs.every((r) => r(labels))
  }
}

/**
 * A field selector (`metadata.name=x`, `metadata.namespace!=y`, joined by commas) as a predicate;
 * `metadata.name` and `metadata.namespace`, the fields every resource supports, and the dotted paths
 * in `selectable` (a CRD's `selectableFields`; a missing field reads as `''`). Undefined for any other
 * field (the server's 400).
 */
export function parseFieldSelector(
  selector: string,
  selectable: readonly string[] = [],
): ((obj: KubeObject) => boolean) | undefined {
  const tests: ((obj: KubeObject) => boolean)[] = []
  for (const term of selector.split(',')) {
    if (term.trim() === '') continue
    const m = /^\s*([A-Za-z0-9_.]+?)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term)
    if (!m) return undefined
    const [, field, op, value] = m as unknown as [string, string, string, string]
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !selectable.includes(field))
      return undefined
    const path = field.split('.')
    const get = (o: KubeObject) => {
      let v: unknown = o
      for (const key of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined
      return v === undefined || v === null ? '' : String(v)
    }
    tests.push(op === '!=' ? (o) => get(o) !== value : (o) => get(o) === value)
  }
  return (obj) => tests.every((t) => t(obj))
}

/** Splits on commas outside parentheses. */
function splitTerms(selector: string): string[] {
  const out: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]
    if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      out.push(selector.slice(start, i))
      start = i + 1
    }
  }
  out.push(selector.slice(start))
  return out
}
