/** @module cli — flag parsing, subcommands, the operator binary's flag set its `check` command and `install`/`uninstall`. */
export * from './check-command.ts'
export * from './duration.ts'
export * from './flags.ts'
export * from './install-command.ts'
export * from './migrate-command.ts'
export * from './operator-flags.ts'
export * from './run-cli.ts'
export * from './value-schemas.ts'
