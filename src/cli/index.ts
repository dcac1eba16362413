/** @module cli — flag parsing, subcommands, the operator binary's flag set and its `check` command. */
export * from './check-command.ts'
export * from './duration.ts'
export * from './flags.ts'
export * from './operator-flags.ts'
export * from './run-cli.ts'
export * from './value-schemas.ts'
