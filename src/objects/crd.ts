/**
 * @module crd — a CustomResourceDefinition generated from zod/mini schemas.
 *
 * Define a resource's spec and status once, as zod/mini schemas: the TypeScript types
 * are inferred from them, runtime validation uses them, and the CRD's structural
 * openAPIV3Schema is generated from them (defaults, bounds, required fields, enums,
 * list-map markers). Attach Kubernetes-only markers with `z.meta({ kubernetes: … })`, field
 * documentation with `z.meta({ description })`, and CEL rules with `celRule` (validation.ts). A
 * regular expression given a message (`z.regex(re, 'must be …')`) becomes the rule
 * `self.matches(…)` with that message rather than a `pattern`, whose refusal quotes only the expression.
 */
import type * as z from 'zod/mini'
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError } from '../core/errors.ts'
import { type CelRule, celRuleOf } from './cel-rule.ts'

/** A structural OpenAPI v3 schema as CRDs accept it. */
export interface OpenApiSchema {
  /** JSON type of the value. */
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean'
  /** Format of a string, e.g. `date-time`. */
  format?: string
  /** Documentation shown by `kubectl explain`. */
  description?: string
  /** Schemas of an object's fields. */
  properties?: Record<string, OpenApiSchema>
  /** Fields an object must have. */
  required?: string[]
  /** Schema of an array's items. */
  items?: OpenApiSchema
  /** The allowed values. */
  enum?: unknown[]
  /** Value the API server fills in when the field is absent. */
  default?: unknown
  /** Smallest allowed number. */
  minimum?: number
  /** Largest allowed number. */
  maximum?: number
  /** Shortest allowed string. */
  minLength?: number
  /** Longest allowed string. */
  maxLength?: number
  /** Fewest allowed array items. */
  minItems?: number
  /** Most allowed array items. */
  maxItems?: number
  /** Regular expression a string must match. */
  pattern?: string
  /** Schema of the values of a map. */
  additionalProperties?: OpenApiSchema
  /** Whether `null` is allowed. */
  nullable?: boolean
  /** How server-side apply merges the array. */
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map'
  /** Keys identifying items of a `map` list. */
  'x-kubernetes-list-map-keys'?: string[]
  /** Keep fields the schema does not list. */
  'x-kubernetes-preserve-unknown-fields'?: boolean
  /** Accept an integer or a string (e.g. `25%`). */
  'x-kubernetes-int-or-string'?: boolean
  /** CEL rules the value must pass. */
  'x-kubernetes-validations'?: CelRule[]
}

/** Kubernetes markers, attached with `z.meta({ kubernetes: { … } })`. */
export interface KubernetesMeta {
  /** `x-kubernetes-list-type` of an array: how server-side apply merges it. */
  listType?: 'atomic' | 'set' | 'map'
  /** `x-kubernetes-list-map-keys`: the keys of a `map` list. */
  listMapKeys?: string[]
  /** `x-kubernetes-preserve-unknown-fields`: keep fields the schema does not list. */
  preserveUnknownFields?: boolean
  /** Field documentation shown by `kubectl explain`. */
  description?: string
  /**
   * OpenAPI `format` of a string the apiserver checks, e.g. `date-time`. Costs no validation code in
   * a bundle, unlike `z.iso.datetime()`, when the operator itself never parses the field.
   */
  format?: string
}

type Def = { type: string; [k: string]: unknown }
type Schema = { _zod: { def: Def } }

const INT32 = { minimum: -2147483648, maximum: 2147483647 }

/**
 * zod string formats with an OpenAPI format the apiserver checks to the same rule (apiextensions
 * supported formats, k8s.io/kube-openapi `pkg/validation/strfmt`): `z.iso.datetime()` is RFC 3339,
 * what `date-time` accepts and what metav1.Time writes. Other formats stay plain strings.
 */
const OPENAPI_FORMATS: Record<string, string> = { datetime: 'date-time' }

/**
 * The metadata `z.meta(…)` attached to a schema: zod's global registry, read where zod itself keeps it.
 * zod (4.1.13 and later, `v4/core/registries.js`) stores its one global registry on
 * `globalThis.__zod_globalRegistry`, so that every copy of zod shares it; reading it there spares this
 * module an import of zod, which the root entry would otherwise pay for at load (about 14 MB of RSS). A
 * schema to convert exists only once zod is loaded, so the registry is there whenever this runs.
 */
function zodMetadata(schema: Schema): unknown {
  const registry = (globalThis as { __zod_globalRegistry?: { get(schema: object): unknown } })
    .__zod_globalRegistry
  return registry?.get(schema)
}

/** Converts a zod/mini schema to a structural openAPIV3Schema. Unsupported constructs throw. */
export function openApiFromZod(schema: z.ZodMiniType): OpenApiSchema {
  return convert(schema as unknown as Schema, '')
}

function convert(s: Schema, path: string): OpenApiSchema {
  const def = s._zod.def
  const meta = (zodMetadata(s) as { kubernetes?: KubernetesMeta; description?: string } | undefined) ?? {}
  const out = base(def, path)
  const k = meta.kubernetes
  const description = k?.description ?? meta.description
  if (description) out.description = description
  if (k?.listType) out['x-kubernetes-list-type'] = k.listType
  if (k?.listMapKeys) out['x-kubernetes-list-map-keys'] = k.listMapKeys
  if (k?.preserveUnknownFields) out['x-kubernetes-preserve-unknown-fields'] = true
  if (k?.format) out.format = k.format
  const rules = ((def.checks as Check[] | undefined) ?? []).flatMap(
    (c) => celRuleOf(c) ?? regexRule(c._zod.def),
  )
  if (rules.length) out['x-kubernetes-validations'] = rules
  return out
}

type Check = { _zod: { def: Record<string, unknown> } }

/** A regular expression given a message, as a CEL rule with it (a raw string: no escaping to redo). */
function regexRule(d: Record<string, unknown>): CelRule[] {
  if (d.format !== 'regex' || !d.error) return []
  const source = (d.pattern as RegExp).source
  if (source.includes("'")) throw unsupported(`the pattern ${source} with a message`)
  return [{ rule: `self.matches(r'${source}')`, message: (d.error as () => string)() }]
}

function base(def: Def, path: string): OpenApiSchema {
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, Schema>
      const properties: Record<string, OpenApiSchema> = {}
      const required: string[] = []
      for (const [key, value] of Object.entries(shape)) {
        properties[key] = convert(value, `${path}.${key}`)
        if (!isOptional(value)) required.push(key)
      }
      return { type: 'object', properties, ...(required.length ? { required } : {}) }
    }
    case 'record':
      return { type: 'object', additionalProperties: convert(def.valueType as Schema, `${path}.*`) }
    case 'array':
      return withChecks({ type: 'array', items: convert(def.element as Schema, `${path}[]`) }, def)
    case 'string':
      // A format schema (`z.iso.datetime()`) carries its format on its own def.
      return withChecks(withStringFormat({ type: 'string' }, def), def)
    case 'number': {
      const integer =
        (typeof def.format === 'string' && def.format.startsWith('int')) || def.format === 'safeint'
      const out: OpenApiSchema = integer
        ? {
            type: 'integer',
            ...(def.format === 'int32' ? { format: 'int32', ...INT32 } : { format: 'int64' }),
          }
        : { type: 'number' }
      return withChecks(out, def)
    }
    case 'int':
      return withChecks({ type: 'integer', format: 'int64' }, def)
    case 'boolean':
      return { type: 'boolean' }
    case 'enum':
      return { type: 'string', enum: Object.values(def.entries as Record<string, string>) }
    case 'literal':
      return {
        type: typeof (def.values as unknown[])[0] === 'number' ? 'number' : 'string',
        enum: def.values as unknown[],
      }
    case 'optional':
      return convert(def.innerType as Schema, path)
    case 'default': {
      const inner = convert(def.innerType as Schema, path)
      const value =
        typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue
      return { ...inner, default: value }
    }
    case 'nullable':
      return { ...convert(def.innerType as Schema, path), nullable: true }
    case 'unknown':
    case 'any':
      return { 'x-kubernetes-preserve-unknown-fields': true }
    default:
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `cannot express zod type "${def.type}" at ${path || '<root>'} in a CRD schema`,
        { step: 'generate CRD schema' },
      )
  }
}

function isOptional(s: Schema): boolean {
  const t = s._zod.def.type
  return t === 'optional' || t === 'default'
}

function withChecks(out: OpenApiSchema, def: Def): OpenApiSchema {
  for (const c of (def.checks as Check[] | undefined) ?? []) {
    const d = c._zod.def
    switch (d.check) {
      case 'greater_than':
        if (d.inclusive) out.minimum = d.value as number
        else throw unsupported('exclusive minimum')
        break
      case 'less_than':
        if (d.inclusive) out.maximum = d.value as number
        else throw unsupported('exclusive maximum')
        break
      case 'min_length':
        if (out.type === 'array') out.minItems = d.minimum as number
        else out.minLength = d.minimum as number
        break
      case 'max_length':
        if (out.type === 'array') out.maxItems = d.maximum as number
        else out.maxLength = d.maximum as number
        break
      case 'string_format':
        withStringFormat(out, d)
        break
    }
  }
  return out
}

function withStringFormat(out: OpenApiSchema, d: Record<string, unknown>): OpenApiSchema {
  if (d.check !== 'string_format') return out
  if (d.format === 'regex' && d.pattern instanceof RegExp && !d.error) out.pattern = d.pattern.source
  const format = OPENAPI_FORMATS[d.format as string]
  if (format) out.format = format
  return out
}

function unsupported(what: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_INVALID', `${what} cannot be expressed in a CRD schema`, {
    step: 'generate CRD schema',
  })
}

/** Inputs of {@link customResourceDefinition}. */
export interface CrdDefinition {
  /** API group, e.g. `platform.example.com`. */
  group: string
  /** The first served version, e.g. `v1alpha1`; the stored one unless `storage` names another. */
  version: string
  /**
   * Further served versions, each with its own `spec` schema (status, scale and printer columns are
   * shared). Serving versions whose schemas differ needs `conversion` with a webhook.
   */
  versions?: { name: string; spec: z.ZodMiniType }[]
  /** The storage version (one of the versions); default `version`. */
  storage?: string
  /** `spec.conversion`, e.g. `{ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } }`; default none (`None`). */
  conversion?: Record<string, unknown>
  /** Kind in CamelCase, e.g. `AppService`. */
  kind: string
  /** Resource name in URLs, lower case, e.g. `appservices`. */
  plural: string
  /** Singular resource name, e.g. `appservice`. */
  singular: string
  /** Short names for kubectl, e.g. `['apps']`. */
  shortNames?: string[]
  /** Whether objects live in a namespace or in the cluster. */
  scope: 'Namespaced' | 'Cluster'
  /** zod schema of `spec`; becomes its OpenAPI schema. */
  spec: z.ZodMiniType
  /** zod schema of `status`; when given, the CRD gets a status subresource. */
  status?: z.ZodMiniType
  /** Scale subresource paths, e.g. `{ specReplicasPath: '.spec.replicas', … }`. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string }
  /** Extra columns of `kubectl get`. */
  printerColumns?: { name: string; type: string; jsonPath: string; description?: string }[]
}

/** The CRD object (apiextensions.k8s.io/v1) for `d`, with a status subresource when `status` is given. */
export function customResourceDefinition(d: CrdDefinition) {
  const status = d.status ? { status: openApiFromZod(d.status) } : {}
  const storage = d.storage ?? d.version
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${d.plural}.${d.group}` },
    spec: {
      group: d.group,
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.singular,
        ...definedProps({ shortNames: d.shortNames }),
      },
      scope: d.scope,
      versions: [{ name: d.version, spec: d.spec }, ...(d.versions ?? [])].map((v) => ({
        name: v.name,
        served: true,
        storage: v.name === storage,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['spec'],
            properties: { spec: openApiFromZod(v.spec), ...status } as Record<string, OpenApiSchema>,
          },
        },
        subresources: { ...(d.status ? { status: {} } : {}), ...definedProps({ scale: d.scale }) },
        ...definedProps({ additionalPrinterColumns: d.printerColumns }),
      })),
      ...definedProps({ conversion: d.conversion }),
    },
  }
}
