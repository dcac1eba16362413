/**
 * @module flags — a small command-line flag parser: flags declared as data, values validated with
 * zod/mini, `EDGEOP_*` environment variables as defaults.
 *
 * Syntax follows the Go `pflag` package Kubernetes binaries use: `--flag=value` and `--flag value`;
 * booleans are `--flag` or `--flag=false` (never a separate word); a repeated scalar flag keeps the
 * last value; `--` ends the flags. A flag given on the command line wins over its environment variable.
 */
import * as z from 'zod/mini'
import { formatDuration, NODE_TIMER_MAX_MS, parseDuration } from './duration.ts'

/**
 * One flag: how to decode one occurrence, its default and its help. `T` is the parsed type.
 * Declare flags with the constructors below; a flag set is a plain object, so it extends by spreading.
 */
export interface Flag<T> {
  /** `value` takes text; `boolean` may stand alone; `list` collects every occurrence. */
  readonly kind: 'value' | 'boolean' | 'list'
  /** Decodes and validates the text of one occurrence; issue messages say why it is invalid. */
  readonly decode: z.ZodMiniType<unknown, string>
  /** The value when neither the flag nor its environment variable is given. */
  readonly default: T
  /** What `--help` says the flag does. */
  readonly description: string
  /** What `--help` shows after the flag name, e.g. `duration`. Empty for booleans. */
  readonly placeholder: string
  /** The default as `--help` shows it. */
  readonly defaultText: string
  /** The accepted range as `--help` shows it (`1..1000`, `1s..1h0m0s`); numeric flags only. */
  readonly rangeText?: string
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

/** A decimal with optional exponent; written so that a long bad value cannot make it backtrack. */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
/**
 * Longest piece of a bad value quoted back in an error: enough to recognise it, short enough that a
 * pasted file or a secret does not end up whole in a log line.
 */
export const MAX_ECHOED_VALUE_CHARS = 64
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
  rangeText?: string,
): Flag<T> => ({
  kind,
  decode,
  default: value,
  description,
  placeholder,
  defaultText,
  rangeText,
})

/** A declaration error (the flag set itself is wrong), thrown when the module loads. */
function declare(ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`flag declaration: ${what}`)
}

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

/**
 * A number flag: a finite decimal within `min..max` (both required: an unbounded count is how
 * `--max-concurrent-reconciles=1e9` exhausts memory); `integer` refuses fractions. `--help` shows
 * the range. Refusals say which rule failed: not a number, not finite (`1e400`), not an integer,
 * below the minimum, above the maximum. `also` adds a rule inside the range (e.g. "-1, 0, or at least
 * 0.01"), and `rangeText` then says it in `--help` instead of `min..max`.
 */
export function numberFlag(
  description: string,
  options: {
    default: number
    integer?: boolean
    min: number
    max: number
    also?: { test: (n: number) => boolean; message: string }
    rangeText?: string
  },
): Flag<number> {
  const { min, max } = options
  declare(
    Number.isFinite(min) && Number.isFinite(max) && min <= options.default && options.default <= max,
    `default ${options.default} outside ${min}..${max}`,
  )
  let n: z.ZodMiniNumber<number> = options.integer ? z.int('expected an integer') : z.number()
  n = n.check(z.gte(min, `must be at least ${min}`), z.lte(max, `must be at most ${max}`))
  if (options.also) n = n.check(z.refine(options.also.test, options.also.message))
  const text = z.string().check(
    z.regex(NUMBER, 'expected a number'),
    z.refine((s) => Number.isFinite(Number(s)), 'not a finite number'),
  )
  const decode = z.pipe(z.pipe(text, z.transform(Number)), n)
  const placeholder = options.integer ? 'int' : 'number'
  const range = options.rangeText ?? `${min}..${max}`
  return make('value', decode, description, options.default, placeholder, undefined, range)
}

/** A boolean flag: `--x`, `--x=true`, `--x=false` (and Go's `1`, `t`, `F`, … spellings). */
export function booleanFlag(description: string, options: { default?: boolean } = {}): Flag<boolean> {
  const decode = z.pipe(
    z.enum([...TRUE, ...FALSE], 'expected true or false'),
    z.transform((v) => TRUE.includes(v)),
  )
  return make('boolean', decode, description, options.default ?? false, '')
}

/**
 * A Go-style duration (`15s`, `1m30s`, `500ms`), parsed to milliseconds. `max` (milliseconds) is
 * required and at most {@link NODE_TIMER_MAX_MS}, so no value can overflow a timer; `min` is optional
 * (a flag where negative means "forever" has none). `--help` shows the range.
 */
export function durationFlag(
  description: string,
  options: { default: number; min?: number; max: number },
): Flag<number> {
  const { min, max } = options
  declare(
    max <= NODE_TIMER_MAX_MS && (min ?? -Infinity) <= options.default && options.default <= max,
    `duration default ${options.default} or max ${max} out of range`,
  )
  let n = z.number().check(z.lte(max, `must be at most ${formatDuration(max)}`))
  if (min !== undefined) n = n.check(z.gte(min, `must be at least ${formatDuration(min)}`))
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
  const range =
    min === undefined ? `at most ${formatDuration(max)}` : `${formatDuration(min)}..${formatDuration(max)}`
  return make(
    'value',
    decode,
    description,
    options.default,
    'duration',
    formatDuration(options.default),
    range,
  )
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
 * environment, a comma-separated list. Default `[]`. An empty item (`--namespace=`, `a,,b`) is
 * refused with `empty` (default "must not be empty"): it usually means a variable expanded to
 * nothing, and silently dropping it can change the meaning (no namespaces = all namespaces).
 */
export function listFlag(
  description: string,
  options: { schema?: z.ZodMiniType<string, string>; placeholder?: string; empty?: string } = {},
): Flag<string[]> {
  const nonEmpty = z.string().check(z.minLength(1, options.empty ?? 'must not be empty'))
  return make(
    'list',
    options.schema ? z.pipe(nonEmpty, options.schema) : nonEmpty,
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

/** `text` cut to {@link MAX_ECHOED_VALUE_CHARS}. */
const cut = (text: string): string =>
  text.length > MAX_ECHOED_VALUE_CHARS ? `${text.slice(0, MAX_ECHOED_VALUE_CHARS)}…` : text
/** `text` quoted for an error line, cut to {@link MAX_ECHOED_VALUE_CHARS} (with its full length). */
export const echoValue = (text: string): string =>
  text.length > MAX_ECHOED_VALUE_CHARS
    ? `${JSON.stringify(text.slice(0, MAX_ECHOED_VALUE_CHARS))}… (${text.length} characters)`
    : JSON.stringify(text)

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
        return { ok: false, error: `unknown flag ${cut(a)} (flags start with --)` }
      args.push(a)
      continue
    }
    const eq = a.indexOf('=')
    const name = a.slice(2, eq < 0 ? undefined : eq)
    const flag = Object.hasOwn(flags, name) ? flags[name] : undefined
    if (flag === undefined) return { ok: false, error: `unknown flag --${cut(name)}` }
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
    for (const t of texts) {
      const r = z.safeParse(flag.decode, t)
      if (!r.success)
        return { ok: false, error: `${where}: ${r.error.issues[0]?.message}, got ${echoValue(t)}` }
      decoded.push(r.data)
    }
    values[camel(name)] = flag.kind === 'list' ? decoded : decoded[0]
  }
  return { ok: true, values: values as FlagValues<F>, args }
}

/**
 * `--help` text for a flag set: one entry per flag with placeholder, description, default, accepted
 * range (numeric flags) and variable.
 */
export function formatFlagsHelp(flags: FlagSet, envPrefix: string = DEFAULT_ENV_PREFIX): string {
  const lines: string[] = []
  for (const [name, f] of Object.entries(flags)) {
    const repeat = f.kind === 'list' ? ' (repeatable)' : ''
    lines.push(`  --${name}${f.placeholder ? ` ${f.placeholder}` : ''}${repeat}`)
    const range = f.rangeText === undefined ? '' : `; range ${f.rangeText}`
    lines.push(`        ${f.description} (default ${f.defaultText}${range}; env ${envName(name, envPrefix)})`)
  }
  return lines.join('\n')
}
