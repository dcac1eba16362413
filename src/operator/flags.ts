/**
 * @module flags — what an operator needs to add flags of its own to {@link OPERATOR_FLAGS}: the flag
 * builders and value schemas of edgeop's CLI, re-exported so that `edgeop/operator` is enough.
 */
export {
  booleanFlag,
  type CliIO,
  DEFAULT_BURST,
  DEFAULT_QPS,
  durationFlag,
  EXIT_FAILURE,
  EXIT_USAGE,
  enumFlag,
  type Flag,
  type FlagSet,
  type FlagValues,
  httpUrl,
  kubeName,
  listFlag,
  nonEmpty,
  numberFlag,
  OPERATOR_FLAGS,
  type OperatorOptions,
  SHARD_FLAGS,
  stringFlag,
  validateMetricsOptions,
  validateOperatorOptions,
  WEBHOOK_FLAGS,
} from '../cli/index.ts'
