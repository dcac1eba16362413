/**
 * @module recording-logger — a Logger that keeps every line it is given, for tests that assert on logs.
 */
import type { LogFields, Logger, LogLevel } from '../../src/core/log.ts'

/** One recorded call; `fields` is absent when the caller passed none. */
export interface RecordedLine {
  level: LogLevel
  msg: string
  fields?: LogFields
}

/** A {@link Logger} plus what it was told, oldest first. */
export interface RecordingLogger extends Logger {
  readonly lines: RecordedLine[]
}

const ALL_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']

/**
 * A logger recording the calls at `levels` (default all) and dropping the others. `child` returns the
 * same logger: its fields are not merged in, so a test sees exactly what the code under test passed.
 */
export function recordingLogger(levels: readonly LogLevel[] = ALL_LEVELS): RecordingLogger {
  const lines: RecordedLine[] = []
  const at =
    (level: LogLevel) =>
    (msg: string, fields?: LogFields): void => {
      if (levels.includes(level)) lines.push({ level, msg, ...(fields ? { fields } : {}) })
    }
  const logger: RecordingLogger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  }
  return logger
}
