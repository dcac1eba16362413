/**
 * The kubeconfig decoder as it was written with zod/mini, before src/config/kubeconfig-schema.ts was
 * written out without zod: the reference test/config/kubeconfig-decoder.test.ts holds the new decoder to
 * (the same values, the same message for the first problem). Test support only.
 */
import * as z from 'zod/mini'
import { quoteInput } from '../../../src/core/quote-input.ts'

/** The string `sigs.k8s.io/yaml` produces when a YAML number or boolean lands in a Go string field. */
function goString(value: unknown): unknown {
  if (typeof value === 'boolean') return String(value)
  if (typeof value !== 'number') return value
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf'
  return String(value)
}

const str = z.pipe(z.transform(goString), z.string())

/** Optional and nullable: both mean "not set". */
function opt<T extends z.ZodMiniType>(schema: T) {
  return z.optional(z.nullable(schema))
}

const extensions = opt(z.array(z.nullable(z.object({ name: opt(str), extension: z.optional(z.unknown()) }))))

/** `v1.Cluster`. */
const clusterSchema = z.object({
  server: opt(str),
  'tls-server-name': opt(str),
  'insecure-skip-tls-verify': opt(z.boolean()),
  'certificate-authority': opt(str),
  'certificate-authority-data': opt(str),
  'proxy-url': opt(str),
  'disable-compression': opt(z.boolean()),
  extensions,
})

/** `v1.ExecConfig`. */
const execSchema = z.object({
  command: opt(str),
  args: opt(z.array(z.nullable(str))),
  env: opt(z.array(z.nullable(z.object({ name: opt(str), value: opt(str) })))),
  apiVersion: opt(str),
  installHint: opt(str),
  provideClusterInfo: opt(z.boolean()),
  interactiveMode: opt(str),
})

/** `v1.AuthInfo`. Impersonation and auth-provider are read only to refuse them. */
const userSchema = z.object({
  'client-certificate': opt(str),
  'client-certificate-data': opt(str),
  'client-key': opt(str),
  'client-key-data': opt(str),
  token: opt(str),
  tokenFile: opt(str),
  as: opt(str),
  'as-uid': opt(str),
  'as-groups': opt(z.array(z.nullable(str))),
  'as-user-extra': opt(z.record(z.string(), z.unknown())),
  username: opt(str),
  password: opt(str),
  'auth-provider': opt(z.object({ name: opt(str) })),
  exec: opt(execSchema),
})

/** `v1.Context`. */
const contextSchema = z.object({ cluster: opt(str), user: opt(str), namespace: opt(str), extensions })

/** `v1.Config`: named lists of clusters, users and contexts, and the current context. */
const kubeconfigSchema = z.object({
  'current-context': opt(str),
  clusters: opt(z.array(z.nullable(z.object({ name: opt(str), cluster: opt(clusterSchema) })))),
  users: opt(z.array(z.nullable(z.object({ name: opt(str), user: opt(userSchema) })))),
  contexts: opt(z.array(z.nullable(z.object({ name: opt(str), context: opt(contextSchema) })))),
})

/** A decoded kubeconfig file (before relative paths are resolved). */
type KubeconfigDocument = z.output<typeof kubeconfigSchema>

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
export function zodDecodeKubeconfig(
  data: unknown,
): { ok: true; value: KubeconfigDocument } | { ok: false; message: string } {
  const result = kubeconfigSchema.safeParse(data)
  if (result.success) return { ok: true, value: result.data }
  const issue = result.error.issues[0]
  if (issue === undefined) return { ok: false, message: 'not a kubeconfig' }
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol')
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
  const expected =
    'expected' in issue && typeof issue.expected === 'string' ? EXPECTED[issue.expected] : undefined
  const problem = expected ? `expected ${expected}, got ${kindOf(value)}` : 'invalid value'
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
