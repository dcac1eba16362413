/**
 * @module flags — a small command-line flag parser: flags declared as data, values validated with
 * zod/mini, `EDGEOP_*` environment variables as defaults.
 *
 * Syntax follows the Go `pflag` package Kubernetes binaries use: `--flag=value` and `--flag value`;
 * booleans are `--flag` or `--flag=false` (never a separate word); a repeated scalar flag keeps the
 * last value; `--` ends the flags. A flag given on the command line wins over its environment variable.
 */
import * as z from 'zod/mini'
import { formatDuration, parseDuration } from './duration.ts'

/**
 * One flag: how to decode one occurrence, its default and its help. `T` is the parsed type.
 * Declare flags with the constructors below; a flag set is a plain object, so it extends by spreading.
 */
export interface Flag<T> {
  /** `value` takes text; `boolean` may stand alone; `list` collects every occurrence. */
  readonly kind: 'value' | 'boolean' | 'list'
  /** Decodes and validates the text of one occurrence; issue messages say why it is invalid. */
  readonly decode: z.ZodMiniType<unknown, string>
  readonly default: T
  readonly description: string
  /** What `--help` shows after the flag name, e.g. `duration`. Empty for booleans. */
  readonly placeholder: string
  /** The default as `--help` shows it. */
  readonly defaultText: string
}

/** Flags by name (kebab-case, without `--`). */
export type FlagSet = Readonly<Record<string, Flag<unknown>>>

/** `leader-elect` → `leaderElect`. */
export type CamelCase<S extends string> = S extends `${infer H}-${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S

/** The parsed values of a flag set, keyed by camel-cased flag name. */
export type FlagValues<F extends FlagSet> = {
  -readonly [K in keyof F & string as CamelCase<K>]: F[K] extends Flag<infer T> ? T : never
}

/** The outcome of {@link parseFlags}: values and positional arguments, or one line saying what is wrong. */
export type FlagParseResult<F extends FlagSet> =
  | { ok: true; values: FlagValues<F>; args: string[] }
  | { ok: false; error: string }

/** Environment variables read for flags start with this: `--qps` ← `EDGEOP_QPS`. */
export const DEFAULT_ENV_PREFIX = 'EDGEOP_'

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
/** Go `strconv.ParseBool`. */
const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True']
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False']

const make = <T>(
  kind: Flag<T>['kind'],
  decode: z.ZodMiniType<unknown, string>,
  description: string,
  value: T,
  placeholder: string,
  defaultText = JSON.stringify(value),
): Flag<T> => ({ kind, decode, default: value, description, placeholder, defaultText })

/** A string flag; `schema` adds checks (e.g. `z.string().check(z.regex(…, 'must be …'))`). */
export function stringFlag(
  description: string,
  options: { default?: string; schema?: z.ZodMiniType<string, string>; placeholder?: string } = {},
): Flag<string> {
  return make(
    'value',
    options.schema ?? z.string(),
    description,
    options.default ?? '',
    options.placeholder ?? 'string',
  )
}

/** A number flag: finite decimal; `integer` and `min` add checks. */
export function numberFlag(
  description: string,
  options: { default: number; integer?: boolean; min?: number },
): Flag<number> {
  let n: z.ZodMiniNumber<number> = options.integer ? z.int('expected an integer') : z.number()
  if (options.min !== undefined) n = n.check(z.gte(options.min, `must be at least ${options.min}`))
  const decode = z.pipe(
    z.pipe(z.string().check(z.regex(NUMBER, 'expected a number')), z.transform(Number)),
    n,
  )
  return make('value', decode, description, options.default, options.integer ? 'int' : 'number')
}

/** A boolean flag: `--x`, `--x=true`, `--x=false` (and Go's `1`, `t`, `F`, … spellings). */
export function booleanFlag(description: string, options: { default?: boolean } = {}): Flag<boolean> {
  const decode = z.pipe(
    z.enum([...TRUE, ...FALSE], 'expected true or false'),
    z.transform((v) => TRUE.includes(v)),
  )
  return make('boolean', decode, description, options.default ?? false, '')
}

/** A Go-style duration (`15s`, `1m30s`, `500ms`), parsed to milliseconds; `min` in milliseconds. */
export function durationFlag(description: string, options: { default: number; min?: number }): Flag<number> {
  let n = z.number()
  if (options.min !== undefined)
    n = n.check(z.gte(options.min, `must be at least ${formatDuration(options.min)}`))
  const text = z
    .string()
    .check(z.refine((s) => parseDuration(s) !== undefined, 'expected a duration like 15s, 1m30s or 500ms'))
  const decode = z.pipe(
    z.pipe(
      text,
      z.transform((s) => parseDuration(s)!),
    ),
    n,
  )
  return make('value', decode, description, options.default, 'duration', formatDuration(options.default))
}

/** One of `values`. */
export function enumFlag<const V extends string>(
  description: string,
  values: readonly V[],
  value: V,
): Flag<V> {
  const decode = z.enum(values as [V, ...V[]], `expected one of ${values.join(', ')}`)
  return make('value', decode as z.ZodMiniType<unknown, string>, description, value, values.join('|'))
}

/**
 * A repeatable string flag: every occurrence is added (`--namespace a --namespace b`); from the
 * environment, a comma-separated list. Empty items are dropped. Default `[]`.
 */
export function listFlag(
  description: string,
  options: { schema?: z.ZodMiniType<string, string>; placeholder?: string } = {},
): Flag<string[]> {
  return make(
    'list',
    options.schema ?? z.string(),
    description,
    [] as string[],
    options.placeholder ?? 'string',
    '[]',
  )
}

/** `leader-elect` → `EDGEOP_LEADER_ELECT`. */
export function envName(flag: string, prefix: string = DEFAULT_ENV_PREFIX): string {
  return prefix + flag.toUpperCase().replace(/-/g, '_')
}

const camel = (s: string): string => s.replace(/-(.)/g, (_, c: string) => c.toUpperCase())

/**
 * Parses `argv` (without the program and command names) against `flags`, with `env` supplying values
 * for flags not on the command line (an empty variable counts as unset). Pure: no I/O, no exit.
 *
 * Guarantees: on failure, `error` is one line naming the flag (and the variable, for values from the
 * environment), the reason, and the offending text, e.g. `--qps: expected a number, got "fast"`.
 *
 * @example
 * const r = parseFlags(OPERATOR_FLAGS, ['--qps=20', '--namespace', 'a'], process.env)
 * if (r.ok) r.values.qps // 20
 */
export function parseFlags<F extends FlagSet>(
  flags: F,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
  envPrefix: string = DEFAULT_ENV_PREFIX,
): FlagParseResult<F> {
  const raw = new Map<string, string[]>()
  const args: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') {
      args.push(...argv.slice(i + 1))
      break
    }
    if (!a.startsWith('--') || a === '--') {
      if (a.startsWith('-') && a !== '-')
        return { ok: false, error: `unknown flag ${a} (flags start with --)` }
      args.push(a)
      continue
    }
    const eq = a.indexOf('=')
    const name = a.slice(2, eq < 0 ? undefined : eq)
    const flag = Object.hasOwn(flags, name) ? flags[name] : undefined
    if (flag === undefined) return { ok: false, error: `unknown flag --${name}` }
    let text: string
    if (eq >= 0) text = a.slice(eq + 1)
    else if (flag.kind === 'boolean') text = 'true'
    else if (i + 1 < argv.length) text = argv[++i]!
    else return { ok: false, error: `--${name}: needs a value` }
    raw.set(name, flag.kind === 'list' ? [...(raw.get(name) ?? []), text] : [text])
  }
  const values: Record<string, unknown> = {}
  for (const [name, flag] of Object.entries(flags)) {
    let texts = raw.get(name)
    let where = `--${name}`
    const fromEnv = env[envName(name, envPrefix)]
    if (texts === undefined && fromEnv !== undefined && fromEnv !== '') {
      texts = flag.kind === 'list' ? fromEnv.split(',').map((s) => s.trim()) : [fromEnv]
      where += ` (from ${envName(name, envPrefix)})`
    }
    if (texts === undefined) {
      values[camel(name)] = Array.isArray(flag.default) ? [...flag.default] : flag.default
      continue
    }
    const decoded: unknown[] = []
    for (const t of flag.kind === 'list' ? texts.filter((s) => s !== '') : texts) {
      const r = z.safeParse(flag.decode, t)
      if (!r.success)
        return { ok: false, error: `${where}: ${r.error.issues[0]?.message}, got ${JSON.stringify(t)}` }
      decoded.push(r.data)
    }
    values[camel(name)] = flag.kind === 'list' ? decoded : decoded[0]
  }
  return { ok: true, values: values as FlagValues<F>, args }
}

/** `--help` text for a flag set: one entry per flag with placeholder, description, default and variable. */
export function formatFlagsHelp(flags: FlagSet, envPrefix: string = DEFAULT_ENV_PREFIX): string {
  const lines: string[] = []
  for (const [name, f] of Object.entries(flags)) {
    const repeat = f.kind === 'list' ? ' (repeatable)' : ''
    lines.push(`  --${name}${f.placeholder ? ` ${f.placeholder}` : ''}${repeat}`)
    lines.push(`        ${f.description} (default ${f.defaultText}; env ${envName(name, envPrefix)})`)
  }
  return lines.join('\n')
}
