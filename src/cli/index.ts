/** @module cli — flag parsing, subcommands, the operator binary's flag set its `check` command and `install`/`uninstall`. */
export * from './check-command.ts'
export * from './flags/duration.ts'
export * from './flags/flags.ts'
export * from './flags/operator-flags.ts'
export * from './flags/value-schemas.ts'
export * from './install-command.ts'
export * from './migrate-command.ts'
export * from './run-cli.ts'
