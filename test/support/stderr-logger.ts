/**
 * @module stderr-logger — the logger of a test fixture process: JSON lines on stderr, debug dropped,
 * so the test reading the process's stdout events still sees what went wrong.
 */
import type { LogFields, Logger } from '../../src/core/log.ts'

/** A logger writing `{ t, level, msg, ...bound, ...fields }` lines to stderr; `child` adds to `bound`. */
export function stderrLogger(bound: LogFields = {}): Logger {
  const line =
    (level: string) =>
    (msg: string, fields: LogFields = {}): void => {
      process.stderr.write(`${JSON.stringify({ t: Date.now(), level, msg, ...bound, ...fields })}\n`)
    }
  return {
    debug: () => {},
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    child: (fields) => stderrLogger({ ...bound, ...fields }),
  }
}
