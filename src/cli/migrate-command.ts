/**
 * @module migrate-command — `<operator> migrate`: the CRDs' stored objects rewritten in their storage
 * version and `status.storedVersions` trimmed to it (`migrateStorage`), after a release switched the
 * storage version. Safe to rerun at any point; `--continue` resumes from the page a run reported.
 */
import type { KubeClient } from '../client/index.ts'
import { errorMessage } from '../core/index.ts'
import { DEFAULT_MIGRATION_CHUNK_SIZE, migrateStorage } from '../objects/index.ts'
import { numberFlag, stringFlag } from './flags/flags.ts'
import { CONNECTION_FLAGS, connectFromFlags } from './install-command.ts'
import { type Command, defineCommand, EXIT_FAILURE } from './run-cli.ts'

/** The largest `--chunk-size`: the apiserver caps a page at its own limit anyway; 10,000 bounds one response's memory. */
export const MAX_MIGRATION_CHUNK_SIZE = 10_000

const MIGRATE_FLAGS = {
  ...CONNECTION_FLAGS,
  'chunk-size': numberFlag('Objects per list page.', {
    default: DEFAULT_MIGRATION_CHUNK_SIZE,
    integer: true,
    min: 1,
    max: MAX_MIGRATION_CHUNK_SIZE,
  }),
  continue: stringFlag('Resume from this page token (printed by an interrupted run); one CRD only.', {
    placeholder: 'token',
  }),
}

/** Options of {@link migrateCommand}. */
export interface MigrateCommandOptions {
  /** The CRDs to migrate, in order, by name. */
  crds: readonly string[]
  /** Where progress goes. Default `process.stdout`. */
  stdout?: { write(s: string): unknown }
  /** Where failures go. Default `process.stderr`. */
  stderr?: { write(s: string): unknown }
  /** Builds the client. Default: the cluster config `--kubeconfig`/`--context` select. */
  connect?(o: {
    kubeconfig: string | undefined
    context: string | undefined
  }): Promise<Pick<KubeClient, 'resource' | 'close'>>
}

/**
 * The `migrate` command. Prints a line per page (with the token to resume from) and one per CRD;
 * exit 0 when every CRD stores one version, 1 when a request failed (rerun: it continues).
 */
export function migrateCommand(options: MigrateCommandOptions): Command<typeof MIGRATE_FLAGS> {
  const out = options.stdout ?? process.stdout
  const err = options.stderr ?? process.stderr
  return defineCommand({
    description:
      "Rewrite stored custom resources in their CRD's storage version, then trim status.storedVersions",
    flags: MIGRATE_FLAGS,
    async run(values) {
      const client = await (options.connect ?? connectFromFlags)(values)
      try {
        for (const crd of options.crds) {
          const r = await migrateStorage({
            client,
            crd,
            chunkSize: values.chunkSize,
            continue: values.continue || undefined,
            onPage: (p) =>
              out.write(
                `${crd}: ${p.rewritten} rewritten, ${p.unchanged} unchanged${p.continue ? `; resume with --continue=${p.continue}` : ''}\n`,
              ),
          })
          out.write(`${crd}: stored as ${r.storageVersion} only (was ${r.storedVersions.join(', ')})\n`)
        }
        return 0
      } catch (e) {
        err.write(`migrate: ${errorMessage(e)} (storedVersions unchanged; rerun to continue)\n`)
        return EXIT_FAILURE
      } finally {
        await client.close()
      }
    },
  })
}
