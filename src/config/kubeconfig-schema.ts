/**
 * @module kubeconfig-schema — the kubeconfig v1 shape (client-go `tools/clientcmd/api/v1`) as a small decoder.
 *
 * Only the fields edgeop reads are listed; every other field is ignored, as client-go's
 * non-strict decoder does. `null` anywhere means "not set" (Go decodes JSON null to the
 * zero value). String fields accept numbers and booleans and turn them into strings,
 * as `sigs.k8s.io/yaml` does when the Go field is a string.
 *
 * The decoder is written out rather than built with zod: importing zod costs a process about 14 MB of
 * RSS (its locales and core, test/bench/base-rss.bench.ts), and every program that loads a kubeconfig
 * would pay it. It reports the first problem in the order a zod/mini schema of the same shape does
 * (fields in the order listed, list items in order); test/config/kubeconfig-decoder.test.ts checks the
 * two against each other.
 */
import { quoteInput } from '../core/quote-input.ts'

/** The string `sigs.k8s.io/yaml` produces when a YAML number or boolean lands in a Go string field. */
function goString(value: unknown): unknown {
  if (typeof value === 'boolean') return String(value)
  if (typeof value !== 'number') return value
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf'
  return String(value)
}

type Path = readonly (string | number)[]

/** The first problem found: where, and the kind of value expected there. */
class DecodeProblem {
  readonly path: Path
  readonly expected: 'array' | 'object' | 'record' | 'string' | 'boolean'
  constructor(path: Path, expected: DecodeProblem['expected']) {
    this.path = path
    this.expected = expected
  }
}

/** Decodes one value at `path`, or throws a {@link DecodeProblem}. */
type Decoder<T> = (value: unknown, path: Path) => T

const str: Decoder<string> = (value, path) => {
  const s = goString(value)
  if (typeof s !== 'string') throw new DecodeProblem(path, 'string')
  return s
}

const bool: Decoder<boolean> = (value, path) => {
  if (typeof value !== 'boolean') throw new DecodeProblem(path, 'boolean')
  return value
}

const unknownValue: Decoder<unknown> = (value) => value

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Optional and nullable: both mean "not set", and are kept as given. */
function opt<T>(decode: Decoder<T>): Decoder<T | null | undefined> {
  return (value, path) => (value === undefined || value === null ? value : decode(value, path))
}

function nullable<T>(decode: Decoder<T>): Decoder<T | null> {
  return (value, path) => (value === null ? null : decode(value, path))
}

function list<T>(decode: Decoder<T>): Decoder<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) throw new DecodeProblem(path, 'array')
    return value.map((item, i) => decode(item, [...path, i]))
  }
}

/** A mapping of any keys (`as-user-extra`): a plain object, copied. */
const record: Decoder<Record<string, unknown>> = (value, path) => {
  const proto = isMapping(value) ? Object.getPrototypeOf(value) : undefined
  if (proto !== Object.prototype && proto !== null) throw new DecodeProblem(path, 'record')
  return { ...(value as Record<string, unknown>) }
}

type Shape = Record<string, Decoder<unknown>>
/** What a shape decodes to: every field optional (all kubeconfig fields are). */
type Decoded<S extends Shape> = { [K in keyof S]?: ReturnType<S[K]> }

/** A mapping with the listed fields, in order; other keys are dropped, absent ones stay absent. */
function object<S extends Shape>(shape: S): Decoder<Decoded<S>> {
  const fields = Object.entries(shape)
  return (value, path) => {
    if (!isMapping(value)) throw new DecodeProblem(path, 'object')
    const out: Record<string, unknown> = {}
    for (const [key, decode] of fields) if (key in value) out[key] = decode(value[key], [...path, key])
    return out as Decoded<S>
  }
}

const extensions = opt(list(nullable(object({ name: opt(str), extension: opt(unknownValue) }))))

/** `v1.Cluster`. */
const clusterSchema = object({
  server: opt(str),
  'tls-server-name': opt(str),
  'insecure-skip-tls-verify': opt(bool),
  'certificate-authority': opt(str),
  'certificate-authority-data': opt(str),
  'proxy-url': opt(str),
  'disable-compression': opt(bool),
  extensions,
})

/** `v1.ExecConfig`. */
const execSchema = object({
  command: opt(str),
  args: opt(list(nullable(str))),
  env: opt(list(nullable(object({ name: opt(str), value: opt(str) })))),
  apiVersion: opt(str),
  installHint: opt(str),
  provideClusterInfo: opt(bool),
  interactiveMode: opt(str),
})

/** `v1.AuthInfo`. Impersonation and auth-provider are read only to refuse them. */
const userSchema = object({
  'client-certificate': opt(str),
  'client-certificate-data': opt(str),
  'client-key': opt(str),
  'client-key-data': opt(str),
  token: opt(str),
  tokenFile: opt(str),
  as: opt(str),
  'as-uid': opt(str),
  'as-groups': opt(list(nullable(str))),
  'as-user-extra': opt(record),
  username: opt(str),
  password: opt(str),
  'auth-provider': opt(object({ name: opt(str) })),
  exec: opt(execSchema),
})

/** `v1.Context`. */
const contextSchema = object({ cluster: opt(str), user: opt(str), namespace: opt(str), extensions })

/** `v1.Config`: named lists of clusters, users and contexts, and the current context. */
const kubeconfigSchema = object({
  'current-context': opt(str),
  clusters: opt(list(nullable(object({ name: opt(str), cluster: opt(clusterSchema) })))),
  users: opt(list(nullable(object({ name: opt(str), user: opt(userSchema) })))),
  contexts: opt(list(nullable(object({ name: opt(str), context: opt(contextSchema) })))),
})

/** A decoded kubeconfig file (before relative paths are resolved). */
export type KubeconfigDocument = ReturnType<typeof kubeconfigSchema>
/** A decoded `cluster` section. */
export type KubeconfigCluster = ReturnType<typeof clusterSchema>
/** A decoded `user` section. */
export type KubeconfigUser = ReturnType<typeof userSchema>
/** A decoded `user.exec` section. */
export type KubeconfigExec = ReturnType<typeof execSchema>
/** A decoded `context` section. */
export type KubeconfigContext = ReturnType<typeof contextSchema>

const EXPECTED: Record<string, string> = {
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
  string: 'a string',
  boolean: 'a boolean (true or false)',
}

/**
 * Validates a parsed YAML value against the kubeconfig schema. On failure returns one
 * message naming the field path (`users[0].user.token`), the entry's name when it has
 * one, what was expected and what kind of value was found — never the value itself.
 */
export function decodeKubeconfig(
  data: unknown,
): { ok: true; value: KubeconfigDocument } | { ok: false; message: string } {
  let issue: DecodeProblem
  try {
    return { ok: true, value: kubeconfigSchema(data, []) }
  } catch (err) {
    if (!(err instanceof DecodeProblem)) throw err
    issue = err
  }
  const path = issue.path
  let where = ''
  let value: unknown = data
  for (const part of path) {
    where += typeof part === 'number' ? `[${part}]` : where ? `.${part}` : part
    value =
      value !== null && typeof value === 'object'
        ? (value as Record<string | number, unknown>)[part]
        : undefined
  }
  const section = path[0]
  const entry = typeof path[1] === 'number' ? pick(data, section, path[1]) : undefined
  const name = entry && typeof entry === 'object' ? (entry as { name?: unknown }).name : undefined
  const named =
    typeof name === 'string' && section ? ` (${String(section).replace(/s$/, '')} ${quoteInput(name)})` : ''
  const problem = `expected ${EXPECTED[issue.expected]}, got ${kindOf(value)}`
  return { ok: false, message: `${where || 'top level'}${named}: ${problem}` }
}

function pick(data: unknown, section: string | number | undefined, index: number): unknown {
  if (section === undefined || data === null || typeof data !== 'object') return undefined
  const list = (data as Record<string | number, unknown>)[section]
  return Array.isArray(list) ? list[index] : undefined
}

/** The kind of a YAML value, for messages (never the value). */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'a mapping'
  return typeof value === 'boolean' ? 'a boolean' : `a ${typeof value}`
}
