/** @module logging — the structured logger (JSON or text lines) and adapters for pino-like and console-like loggers. */
export {
  createLogger,
  DEFAULT_LIBRARY_LOG_LEVEL,
  DEFAULT_LOG_FORMAT,
  DEFAULT_LOG_LEVEL,
  defaultLogger,
  type LogFormat,
  type LoggerOptions,
  type LogStream,
} from './logger.ts'
export { type ConsoleLike, consoleLogger, type PinoLike, pinoLogger } from './logger-adapters.ts'
