/**
 * @module logger-adapters — a user's own logger (the `console`, pino or anything shaped like it)
 * behind edgeop's {@link Logger} interface.
 *
 * The interface every component logs through is five methods: `debug`, `info`, `warn` and
 * `error(msg, fields?)`, plus `child(fields)` returning a logger that adds `fields` to every line.
 * Anything implementing them can be passed as `logger`; the two adapters below cover the common
 * shapes. Both redact credential-like fields with core's {@link redactFields}, as edgeop's own
 * logger does, before the user's logger sees them.
 */
import { type LogFields, type Logger, type LogLevel, redactFields } from '../core/log.ts'

/** The slice of `console` that {@link consoleLogger} calls: one method per level, `(msg, fields)`. */
export interface ConsoleLike {
  /** Receives debug lines. */
  debug(msg: string, fields: LogFields): void
  /** Receives info lines. */
  info(msg: string, fields: LogFields): void
  /** Receives warnings. */
  warn(msg: string, fields: LogFields): void
  /** Receives errors. */
  error(msg: string, fields: LogFields): void
}

/** A pino-like logger: the object first, the message second, and `child(bindings)`. */
export interface PinoLike {
  /** Receives debug lines as `(fields, msg)`. */
  debug(obj: LogFields, msg: string): void
  /** Receives info lines as `(fields, msg)`. */
  info(obj: LogFields, msg: string): void
  /** Receives warnings as `(fields, msg)`. */
  warn(obj: LogFields, msg: string): void
  /** Receives errors as `(fields, msg)`. */
  error(obj: LogFields, msg: string): void
  /** A logger that adds `bindings` to every line (pino's own child). */
  child(bindings: LogFields): PinoLike
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }
const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']

/**
 * A {@link Logger} over `console` (or any {@link ConsoleLike}): `console.info(msg, fields)`, with the
 * bound fields of `child` merged under the call's. Lines below `level` (default `info`, the binary's
 * default) are dropped, since `console` has no levels of its own.
 *
 * @example
 * await runOperator({ name: 'mirror', logger: ({ level }) => consoleLogger(console, { level }), controllers })
 */
export function consoleLogger(target: ConsoleLike, options: { level?: LogLevel } = {}): Logger {
  const min = RANK[options.level ?? 'info']
  const make = (bound: LogFields): Logger => {
    const logger = { child: (fields: LogFields) => make({ ...bound, ...fields }) } as Logger
    for (const level of LEVELS)
      logger[level] = (msg, fields) => {
        if (RANK[level] >= min) target[level](msg, redactFields({ ...bound, ...fields }))
      }
    return logger
  }
  return make({})
}

/**
 * A {@link Logger} over a pino-like logger (structural: no pino dependency): `info(msg, fields)`
 * becomes `target.info(fields, msg)`, and `child(fields)` becomes `target.child(fields)`, so pino
 * keeps its own level, bindings and serializers.
 *
 * @example
 * await runOperator({ name: 'mirror', logger: pinoLogger(pino()), controllers })
 */
export function pinoLogger(target: PinoLike): Logger {
  const logger = { child: (fields: LogFields) => pinoLogger(target.child(redactFields(fields))) } as Logger
  for (const level of LEVELS) logger[level] = (msg, fields) => target[level](redactFields({ ...fields }), msg)
  return logger
}
