/**
 * @module run-cli — subcommands over {@link parseFlags}: a pure `parseCommandLine` that decides what to
 * do, and a thin `runCli` that does it (prints, runs, exits).
 *
 * Exit codes: 0 success (and `--help`), 2 invalid command line (Go's `flag` package uses 2), 1 when
 * a command fails or throws, or whatever a command returns.
 */
import { errorMessage } from '../core/index.ts'
import { echoValue, type FlagSet, type FlagValues, formatFlagsHelp, parseFlags } from './flags/flags.ts'

/** Exit code for a command line that cannot be parsed (Go `flag.ExitOnError`). */
export const EXIT_USAGE = 2
/** Exit code when a command throws. */
export const EXIT_FAILURE = 1

/** One subcommand. */
export interface Command<F extends FlagSet = FlagSet> {
  /** One line for the command list. */
  description: string
  flags: F
  /** Accept positional arguments (default false: any is an error). */
  args?: boolean
  /** Checks across flags: one line naming the flag, or undefined. */
  validate?(values: FlagValues<F>): string | undefined
  /**
   * Checks that need the machine (a directory exists and is writable), run by {@link runCli} after
   * `validate` and before `run`: one line naming the flag (a usage error, exit 2), or undefined.
   */
  precheck?(values: FlagValues<F>): Promise<string | undefined> | string | undefined
  /** Runs the command; its result is the exit code (undefined = 0). */
  run(values: FlagValues<F>, args: string[]): Promise<number | undefined> | number | undefined
}

/** A binary: its name (the prefix of error lines), commands and the one run without a command name. */
export interface CliSpec {
  name: string
  description?: string
  // biome-ignore lint/suspicious/noExplicitAny: each command has its own flag set; `defineCommand` keeps them typed.
  commands: Record<string, Command<any>>
  /** Run when argv does not start with a command name. */
  defaultCommand?: string
  /** Default `EDGEOP_`. */
  envPrefix?: string
}

/** Declares a command with its values typed from its flags. */
export function defineCommand<F extends FlagSet>(command: Command<F>): Command<F> {
  return command
}

/** What the command line asks for. */
export type CliAction =
  | { kind: 'help'; text: string }
  | { kind: 'error'; message: string }
  | { kind: 'run'; command: string; values: Record<string, unknown>; args: string[] }

/**
 * Decides what `argv` asks for, without I/O. `argv` excludes the node binary and script.
 * `--help`/`-h` anywhere before `--` (or the command `help`) asks for help.
 *
 * @example
 * parseCommandLine(spec, ['check', '--qps', 'fast'], {})
 * // { kind: 'error', message: '--qps: expected a number, got "fast"' }
 */
export function parseCommandLine(
  spec: CliSpec,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliAction {
  const first = argv[0]
  let name = spec.defaultCommand
  let rest = argv
  if (first !== undefined && !first.startsWith('-')) {
    if (first === 'help') return { kind: 'help', text: help(spec, undefined) }
    if (!Object.hasOwn(spec.commands, first)) {
      return {
        kind: 'error',
        message: `unknown command ${echoValue(first)} (commands: ${Object.keys(spec.commands).join(', ')})`,
      }
    }
    name = first
    rest = argv.slice(1)
  }
  const end = rest.indexOf('--')
  const flagsPart = end < 0 ? rest : rest.slice(0, end)
  if (flagsPart.includes('--help') || flagsPart.includes('-h') || name === undefined) {
    return { kind: 'help', text: help(spec, name === first ? name : undefined) }
  }
  const command = spec.commands[name]!
  const parsed = parseFlags(command.flags, rest, env, spec.envPrefix)
  if (!parsed.ok) return { kind: 'error', message: parsed.error }
  if (parsed.args.length > 0 && !command.args) {
    return { kind: 'error', message: `unexpected argument ${echoValue(parsed.args[0]!)}` }
  }
  const invalid = command.validate?.(parsed.values)
  if (invalid !== undefined) return { kind: 'error', message: invalid }
  return { kind: 'run', command: name, values: parsed.values, args: parsed.args }
}

function help(spec: CliSpec, named: string | undefined): string {
  const shown = named ?? spec.defaultCommand
  const out = [`Usage: ${spec.name}${named ? ` ${named}` : ' [command]'} [flags]`]
  if (spec.description && !named) out.push('', spec.description)
  if (!named) {
    out.push('', 'Commands:')
    const width = Math.max(...Object.keys(spec.commands).map((c) => c.length))
    for (const [c, cmd] of Object.entries(spec.commands)) {
      out.push(`  ${c.padEnd(width)}  ${cmd.description}${c === spec.defaultCommand ? ' (default)' : ''}`)
    }
  } else out.push('', spec.commands[named]!.description)
  if (shown !== undefined)
    out.push(
      '',
      `Flags${named ? '' : ` (${shown})`}:`,
      formatFlagsHelp(spec.commands[shown]!.flags, spec.envPrefix),
    )
  return `${out.join('\n')}\n`
}

/** The process as {@link runCli} uses it (a seam for tests). */
export interface CliIO {
  /** The arguments after the node binary and script. Default `process.argv.slice(2)`. */
  argv: readonly string[]
  /** Where flags' environment variables are read. Default `process.env`. */
  env: Readonly<Record<string, string | undefined>>
  /** Receives `--help` and command output. Default `process.stdout`. */
  stdout: { write(s: string): unknown }
  /** Receives the one error line of a failure. Default `process.stderr`. */
  stderr: { write(s: string): unknown }
  /** Ends the process with the exit code. Default `process.exit`. */
  exit(code: number): void
}

/**
 * The thin process glue: parses, prints help to stdout or one error line to stderr
 * (`<name>: <message>`), runs the command's `precheck` (a refusal exits 2), runs the command, and
 * exits with its code.
 *
 * @example
 * await runCli({ name: 'my-operator', defaultCommand: 'run', commands: { run, check } })
 */
export async function runCli(spec: CliSpec, io: Partial<CliIO> = {}): Promise<void> {
  const {
    argv = process.argv.slice(2),
    env = process.env,
    stdout = process.stdout,
    stderr = process.stderr,
  } = io
  const exit = io.exit ?? ((code: number) => process.exit(code))
  const action = parseCommandLine(spec, argv, env)
  if (action.kind === 'help') {
    stdout.write(action.text)
    return exit(0)
  }
  if (action.kind === 'error') {
    stderr.write(`${spec.name}: ${action.message}\n`)
    return exit(EXIT_USAGE)
  }
  const command = spec.commands[action.command]!
  let code: number
  try {
    const refused = await command.precheck?.(action.values)
    if (refused !== undefined) {
      stderr.write(`${spec.name}: ${refused}\n`)
      return exit(EXIT_USAGE)
    }
    code = (await command.run(action.values, action.args)) ?? 0
  } catch (err) {
    stderr.write(`${spec.name}: ${errorMessage(err).replace(/\s*\n\s*/g, ' ')}\n`)
    code = EXIT_FAILURE
  }
  exit(code)
}
