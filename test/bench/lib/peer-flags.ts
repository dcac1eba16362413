/**
 * @module peer-flags — the Node flags a benchmark job asks for, and the check that the peer's process
 * really received them. A row is named after its flags (`edgeop (protobuf, compact,
 * --optimize-for-size)`), so a process started without them would measure the default-flag row under
 * another name: the driver refuses it instead (lib/peers.ts, PeerProcess).
 */

/** The message a Node peer sends first (peers/protocol.ts, readJob): the flags its process received. */
export const HELLO_EVENT = 'hello'

/** The job's `nodeFlags` (peers/protocol.ts, Job), none when unset. */
export function nodeFlagsOf(job: object): readonly string[] {
  const flags = (job as { nodeFlags?: unknown }).nodeFlags
  if (flags === undefined) return []
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === 'string'))
    throw new Error(`nodeFlags must be a list of strings, got ${JSON.stringify(flags)}`)
  return flags
}

/**
 * Why a peer's first message does not show the flags `expected` (undefined when it does): it must be
 * the {@link HELLO_EVENT} message, and its `execArgv` (the process's `process.execArgv`) must hold
 * every expected flag.
 */
export function flagRefusal(
  expected: readonly string[],
  first: { event: string } & Record<string, unknown>,
): string | undefined {
  const execArgv = first.execArgv
  if (first.event !== HELLO_EVENT || !Array.isArray(execArgv))
    return `its first message was "${first.event}", not "${HELLO_EVENT}" with its process.execArgv`
  const missing = expected.filter((f) => !execArgv.includes(f))
  if (missing.length === 0) return undefined
  return `started for ${missing.join(' ')}, but its process.execArgv is ${JSON.stringify(execArgv)}; the row would not measure what it names`
}
