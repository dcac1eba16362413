/**
 * @module check-command — `<operator> check`: run the preflight with the operator's own flags and
 * print what is missing, with the RBAC rules that would grant it.
 */
import { KubeClient } from '../client/index.ts'
import { loadClusterConfig } from '../config/index.ts'
import {
  formatPreflight,
  leaderElectionPermissions,
  type PreflightClient,
  type PreflightRequirements,
  preflight,
} from '../manager/index.ts'
import {
  OPERATOR_FLAGS,
  type OperatorOptions,
  SHARD_FLAGS,
  validateOperatorOptions,
} from './flags/operator-flags.ts'
import { type Command, defineCommand } from './run-cli.ts'

/** A client the check command can close. */
export type CheckClient = PreflightClient & { readonly defaultNamespace: string; close(): Promise<void> }

/** Options of {@link checkCommand}. */
export interface CheckCommandOptions {
  /** What the operator needs, possibly from its options (e.g. one permission per `--namespace`). */
  requirements: PreflightRequirements | ((options: OperatorOptions) => PreflightRequirements)
  /** Where the report goes. Default `process.stdout`. */
  stdout?: { write(s: string): unknown }
  /** Builds the client. Default: the cluster config the flags select, with their QPS and burst. */
  connect?(options: OperatorOptions): Promise<CheckClient>
  /** The operator is sharded: `--shard` ({@link SHARD_FLAGS}) is offered and checks the ring's Lease rights. Default false. */
  sharding?: boolean
}

/** The flags of `check`: the operator flags, and `--shard` for a sharded operator. */
export type CheckFlags = typeof OPERATOR_FLAGS & Partial<typeof SHARD_FLAGS>

async function connectFromFlags(o: OperatorOptions): Promise<CheckClient> {
  const config = await loadClusterConfig({
    kubeconfig: o.kubeconfig || undefined,
    context: o.context || undefined,
  })
  return new KubeClient(config, { qps: o.qps, burst: o.burst })
}

/**
 * The `check` command over {@link OPERATOR_FLAGS} (and {@link SHARD_FLAGS} with `sharding`): loads the configuration as `run` would, runs
 * `preflight` against the requirements (plus the Lease permissions when `--leader-elect` or `--shard`, which also lists them, is set, in
 * `--leader-election-namespace` or the configuration's namespace), prints the report and exits 0
 * when everything passed, 1 otherwise.
 *
 * @example
 * await runCli({ name: 'my-operator', defaultCommand: 'run', commands: {
 *   run, check: checkCommand({ requirements: (o) => ({ permissions: widgetPermissions(o.namespace) }) }),
 * } })
 */
export function checkCommand(options: CheckCommandOptions): Command<CheckFlags> {
  return defineCommand<typeof OPERATOR_FLAGS & typeof SHARD_FLAGS>({
    description:
      'Check that the cluster answers, the credentials work, and the resources and RBAC the operator needs exist',
    flags: (options.sharding
      ? { ...OPERATOR_FLAGS, ...SHARD_FLAGS }
      : OPERATOR_FLAGS) as typeof OPERATOR_FLAGS & typeof SHARD_FLAGS,
    validate: validateOperatorOptions,
    async run(values) {
      const client = await (options.connect ?? connectFromFlags)(values)
      try {
        const wanted =
          typeof options.requirements === 'function' ? options.requirements(values) : options.requirements
        const permissions = [...(wanted.permissions ?? [])]
        if (values.leaderElect || values.shard) {
          const p = leaderElectionPermissions(values.leaderElectionNamespace || client.defaultNamespace)
          // Sharded, each pass also lists the ring's membership Leases.
          permissions.push(values.shard ? { ...p, verbs: [...p.verbs, 'list'] } : p)
        }
        const report = await preflight(client, { ...wanted, permissions })
        ;(options.stdout ?? process.stdout).write(formatPreflight(report))
        return report.ok ? 0 : 1
      } finally {
        await client.close()
      }
    },
  })
}
