/**
 * @module patches — JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on plain objects, as the API server applies them.
 */

/** A JSON value as the model stores it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const isObject = (v: unknown): v is Record<string, Json> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)

/** `target` with the RFC 7386 merge patch `patch` applied (null deletes a key; arrays replace). */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch)
  const out: Record<string, Json> = isObject(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

/** Why a JSON patch was refused: a failed `test` or a path that does not resolve (the server's 422). */
export class JsonPatchError extends Error {}

interface Op {
  op: string
  path: string
  value?: Json
  from?: string
}

/** `doc` with the RFC 6902 `ops` applied in order, all or nothing. @throws JsonPatchError */
export function jsonPatch(doc: Json, ops: readonly Op[]): Json {
  let out = structuredClone(doc)
  for (const o of ops) {
    switch (o.op) {
      case 'test':
        if (JSON.stringify(get(out, o.path)) !== JSON.stringify(o.value))
          throw new JsonPatchError(`test failed at ${o.path}`)
        break
      case 'remove':
        out = put(out, o.path, undefined, 'remove')
        break
      case 'add':
        out = put(out, o.path, structuredClone(o.value ?? null), 'add')
        break
      case 'replace':
        out = put(out, o.path, structuredClone(o.value ?? null), 'replace')
        break
      case 'move': {
        const v = get(out, o.from ?? '')
        out = put(put(out, o.from ?? '', undefined, 'remove'), o.path, v as Json, 'add')
        break
      }
      case 'copy':
        out = put(out, o.path, structuredClone(get(out, o.from ?? '') as Json), 'add')
        break
      default:
        throw new JsonPatchError(`unknown op ${JSON.stringify(o.op)}`)
    }
  }
  return out
}

const tokens = (path: string): string[] =>
  path === ''
    ? []
    : path
        .slice(1)
        .split('/')
        .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'))

function get(doc: Json, path: string): Json | undefined {
  let cur: Json | undefined = doc
  for (const t of tokens(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)]
    else if (isObject(cur)) cur = Object.hasOwn(cur, t) ? cur[t] : undefined
    else return undefined
  }
  return cur
}

/** Sets, adds or removes at `path` in place (the document is already a copy). */
function put(doc: Json, path: string, value: Json | undefined, op: 'add' | 'replace' | 'remove'): Json {
  const ts = tokens(path)
  if (ts.length === 0) {
    if (op === 'remove') throw new JsonPatchError('cannot remove the document')
    return value as Json
  }
  const parent = get(
    doc,
    `/${ts
      .slice(0, -1)
      .map((t) => t.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/')}`.replace(/^\/$/, ''),
  )
  const last = ts[ts.length - 1] as string
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last)
    if (!Number.isInteger(i) || i < 0 || i > parent.length || (op !== 'add' && i >= parent.length))
      throw new JsonPatchError(`no index ${last} at ${path}`)
    if (op === 'add') parent.splice(i, 0, value as Json)
    else if (op === 'replace') parent[i] = value as Json
    else parent.splice(i, 1)
  } else if (isObject(parent)) {
    if (op !== 'add' && !Object.hasOwn(parent, last)) throw new JsonPatchError(`no field at ${path}`)
    if (op === 'remove') delete parent[last]
    else parent[last] = value as Json
  } else throw new JsonPatchError(`no parent at ${path}`)
  return doc
}
