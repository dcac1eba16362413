/** @module core — errors, time, backoff, logging and object types shared by every layer. */
export { raceAbort } from './abort.ts'
export {
  Backoff,
  type BackoffOptions,
  DEFAULT_BACKOFF_FACTOR,
  DEFAULT_BACKOFF_INITIAL_MS,
  DEFAULT_BACKOFF_JITTER,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_BACKOFF_RESET_MS,
} from './backoff.ts'
export {
  type BoundedReadOptions,
  DEFAULT_FILE_READ_TIMEOUT_MS,
  formatByteLimit,
  readBoundedFile,
  readBoundedText,
} from './bounded-file.ts'
export { type CancelTimer, type Clock, ManualClock, realClock, sleep } from './clock.ts'
export { type Deadline, deadlineSignal, withDeadline } from './deadline.ts'
export {
  EdgeopError,
  type EdgeopErrorOptions,
  type ErrorCode,
  errorMessage,
  isEdgeopError,
} from './errors.ts'
export { type LogFields, type Logger, type LogLevel, noopLogger, redactFields } from './log.ts'
export {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  isDns1123Label,
  isDns1123Subdomain,
} from './names.ts'
export { quoteInput, quoteInputs } from './quote-input.ts'
export {
  SYSTEM_DIRECTORIES,
  SYSTEM_DIRECTORY_NAMES,
  SYSTEM_TREES,
  systemDirectoryOf,
} from './system-directories.ts'
export { TokenBucket, type TokenBucketOptions } from './token-bucket.ts'
export {
  type Condition,
  type KubeEvent,
  type KubeList,
  type KubeObject,
  type Lease,
  type LeaseSpec,
  type ListMeta,
  type ManagedFieldsEntry,
  type ObjectKey,
  type ObjectMeta,
  type ObjectReference,
  type OwnerReference,
  objectKey,
  type PartialObjectMetadata,
  type Status,
  type StatusCause,
  type StatusDetails,
  splitObjectKey,
  type WatchEvent,
  type WatchEventType,
} from './types.ts'
