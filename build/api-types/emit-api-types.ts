/**
 * @module build/api-types/emit-api-types — OpenAPI v3 schemas of built-in kinds → type-only TypeScript.
 *
 * The mapping, schema by schema:
 * - a kind (a schema with `x-kubernetes-group-version-kind`) → `interface X extends KubeObject`,
 *   with `apiVersion`/`kind` as optional strings whose value the TSDoc states (list items arrive
 *   without them; a literal type would refuse objects built from plain literals) and
 *   `metadata` inherited from core's `KubeObject` (required there: every object has it);
 * - any other object schema → `interface X`; `required` → non-optional members, the others
 *   `?: T | undefined` (so consumers under exactOptionalPropertyTypes can copy optional fields);
 * - `description` → TSDoc on each declaration and member, a `Deprecated:` paragraph → `@deprecated`;
 * - `integer`/`number` of any `format` (int32, int64, double) → `number`; `enum` → a union of literals;
 *   `additionalProperties` → `Record<string, V>`; an object with no properties → `Record<string, never>`;
 * - the apimachinery scalars are inlined ({@link INLINE}): `Time`/`MicroTime` → `string` (RFC 3339),
 *   `Quantity` → `string` (the serialized form servers return), `IntOrString` and
 *   `x-kubernetes-int-or-string` → `number | string`;
 * - `ObjectMeta` and `metav1.Condition` are core's own types, so the generated kinds are
 *   `KubeObject`s the whole runtime accepts.
 *
 * Pure: text in, text out. `build/gen-api-types.ts` formats it with biome and writes it.
 */
import type { Schema } from './openapi-subset.ts'
import { referencedSchemas } from './openapi-subset.ts'

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.'
const EXTENSIONS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.'

/**
 * Schemas written as a type expression where they are used, with no declaration of their own.
 * The three `JSONSchemaPropsOr…` schemas have no structure in OpenAPI (custom JSON marshalling in
 * apiextensions `types_jsonschema.go`); their types here are what that marshalling accepts.
 */
export const INLINE: Readonly<Record<string, string>> = {
  [`${META}Time`]: 'string',
  [`${META}MicroTime`]: 'string',
  ['io.k8s.apimachinery.pkg.api.resource.Quantity']: 'string',
  ['io.k8s.apimachinery.pkg.util.intstr.IntOrString']: 'number | string',
  [`${META}ObjectMeta`]: 'ObjectMeta',
  [`${META}Condition`]: 'Condition',
  [`${EXTENSIONS}JSON`]: 'unknown',
  [`${EXTENSIONS}JSONSchemaPropsOrArray`]: 'JSONSchemaProps | JSONSchemaProps[]',
  [`${EXTENSIONS}JSONSchemaPropsOrBool`]: 'JSONSchemaProps | boolean',
  [`${EXTENSIONS}JSONSchemaPropsOrStringArray`]: 'JSONSchemaProps | string[]',
}

/** Core types the generated file imports (the inlined names that are declarations of core). */
const CORE_IMPORTS = ['Condition', 'KubeObject', 'ObjectMeta'] as const

/**
 * Names for schemas whose last segment another reachable schema shares. Every collision must be
 * listed: the generator fails on an unlisted one instead of picking a name.
 */
export const RENAMES: Readonly<Record<string, string>> = {
  'io.k8s.api.discovery.v1.EndpointPort': 'EndpointSlicePort',
}

/** `x-kubernetes-group-version-kind` entries. */
interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

/** The generated declarations file and the names it exports. */
export interface EmittedTypes {
  /** The declarations, unformatted. */
  text: string
  /** Every exported type name, sorted. */
  names: string[]
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** The schema a `$ref` names, without the `#/components/schemas/` prefix. */
const refName = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1)

/** A TSDoc comment of `description` (paragraphs kept, `*\/` escaped), indented by `indent`. */
function tsdoc(description: string, indent: string): string {
  const lines = description
    .replaceAll('*/', '*\\/')
    .split('\n')
    .map((l) => l.trimEnd())
  const deprecated = /(?:^|\s)Deprecated:\s*([^\n]*)/.exec(description)
  if (deprecated) lines.push('', `@deprecated ${deprecated[1]!.replaceAll('*/', '*\\/').trim()}`.trimEnd())
  while (lines.length > 0 && lines.at(-1) === '') lines.pop()
  return `${indent}/**\n${lines.map((l) => (l === '' ? `${indent} *` : `${indent} * ${l}`)).join('\n')}\n${indent} */\n`
}

/** Emits the declarations for `schemas` (an {@link openApiSubset}) rooted at `roots`. */
export function emitApiTypes(
  schemas: Record<string, Schema>,
  roots: readonly string[],
  header: string,
): EmittedTypes {
  // The declared schemas: reachable from the roots without passing through an inlined one.
  const declared = new Set<string>()
  const pending = [...roots]
  while (pending.length > 0) {
    const name = pending.pop()!
    if (declared.has(name) || name in INLINE) continue
    const schema = schemas[name]
    if (!schema) throw new Error(`schema ${name} is not in the OpenAPI subset`)
    declared.add(name)
    pending.push(...referencedSchemas(schema))
  }
  const tsName = new Map<string, string>()
  const owner = new Map<string, string>()
  for (const name of [...declared].sort()) {
    const short = RENAMES[name] ?? name.slice(name.lastIndexOf('.') + 1)
    const clash = owner.get(short)
    if (clash) throw new Error(`${name} and ${clash} would both be named ${short}: add one to RENAMES`)
    if ((CORE_IMPORTS as readonly string[]).includes(short))
      throw new Error(`${name} would shadow core's ${short}: add it to RENAMES or INLINE`)
    owner.set(short, name)
    tsName.set(name, short)
  }
  const usedCore = new Set<string>()

  const typeOf = (s: Schema, where: string): string => {
    if (s['x-kubernetes-int-or-string'] === true) return 'number | string'
    if (typeof s.$ref === 'string') return refType(refName(s.$ref))
    const allOf = s['allOf']
    if (Array.isArray(allOf)) {
      if (allOf.length !== 1) throw new Error(`${where}: allOf with ${allOf.length} entries`)
      return typeOf(allOf[0] as Schema, where)
    }
    const values = s['enum']
    if (Array.isArray(values)) return values.map((v) => JSON.stringify(v)).join(' | ')
    switch (s['type']) {
      case 'string':
        return 'string'
      case 'integer':
      case 'number':
        return 'number'
      case 'boolean':
        return 'boolean'
      case 'array': {
        const item = typeOf(s['items'] as Schema, `${where}[]`)
        return item.includes(' ') ? `(${item})[]` : `${item}[]`
      }
      case 'object': {
        const extra = s['additionalProperties']
        if (extra === undefined) {
          if (s['properties'] !== undefined) throw new Error(`${where}: inline object schema`)
          return 'Record<string, never>'
        }
        return `Record<string, ${extra === true || Object.keys(extra as object).length === 0 ? 'unknown' : typeOf(extra as Schema, `${where}{}`)}>`
      }
      case undefined:
        return 'unknown'
      default:
        throw new Error(`${where}: unsupported type ${JSON.stringify(s['type'])}`)
    }
  }
  const refType = (name: string): string => {
    const inline = INLINE[name]
    if (inline !== undefined) {
      if ((CORE_IMPORTS as readonly string[]).includes(inline)) usedCore.add(inline)
      return inline
    }
    const ts = tsName.get(name)
    if (!ts) throw new Error(`reference to undeclared schema ${name}`)
    return ts
  }

  const blocks: string[] = []
  for (const name of [...declared].sort((a, b) => tsName.get(a)!.localeCompare(tsName.get(b)!))) {
    const s = schemas[name]!
    const ts = tsName.get(name)!
    const gvks = s['x-kubernetes-group-version-kind'] as GroupVersionKind[] | undefined
    const gvk = gvks?.length === 1 ? gvks[0] : undefined
    const origin = gvk
      ? `\`${gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`}\` ${gvk.kind}, generated from OpenAPI schema \`${name}\`.`
      : `Generated from OpenAPI schema \`${name}\`.`
    const doc = tsdoc(`${String(s['description'] ?? ts).trim()}\n\n${origin}`, '')
    const properties = s['properties'] as Record<string, Schema> | undefined
    if (s['type'] !== 'object' || properties === undefined) {
      blocks.push(`${doc}export type ${ts} = ${typeOf(s, ts)}\n`)
      continue
    }
    const required = new Set((s['required'] as string[] | undefined) ?? [])
    const members: string[] = []
    for (const [prop, ps] of Object.entries(properties)) {
      const key = IDENTIFIER.test(prop) ? prop : JSON.stringify(prop)
      const description = String(ps['description'] ?? `\`${prop}\` (undocumented in the OpenAPI document).`)
      if (gvk && prop === 'metadata') continue // KubeObject's: ObjectMeta, required
      let type = typeOf(ps, `${ts}.${prop}`)
      let always = ''
      if (gvk && (prop === 'apiVersion' || prop === 'kind')) {
        // A string, not a literal: `{ apiVersion: 'v1', … }` built in a variable widens to string, and
        // a literal type would refuse it (the documented mirror controller does exactly that).
        const value =
          prop === 'kind' ? gvk.kind : gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`
        type = 'string'
        always = `\n\nAlways \`${value}\` for this kind.`
      }
      // `| undefined` on optional members: consumers with exactOptionalPropertyTypes can copy an optional
      // field from one object to another (`data: original.data`).
      const optional = required.has(prop) ? '' : '?'
      members.push(
        `${tsdoc(description + always, '  ')}  ${key}${optional}: ${type}${optional ? ' | undefined' : ''}\n`,
      )
    }
    if (gvk) usedCore.add('KubeObject')
    blocks.push(`${doc}export interface ${ts}${gvk ? ' extends KubeObject' : ''} {\n${members.join('')}}\n`)
  }
  const imports = [...usedCore].sort()
  const text = `${header}\nimport type { ${imports.join(', ')} } from '../core/types.ts'\n\n${blocks.join('\n')}`
  return { text, names: [...tsName.values()].sort() }
}
