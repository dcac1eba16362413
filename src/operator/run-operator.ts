/**
 * @module run-operator — a whole operator binary in one call: `run` (the default) and `check`, with
 * controller-runtime's flags, parsed from `process.argv` and `<NAME>_*` variables (see {@link envPrefixOf}).
 *
 * It is what a kubebuilder `main.go` does around `ctrl.NewManager(cfg, ctrl.Options{…})`,
 * `(&Reconciler{}).SetupWithManager(mgr)` and `mgr.Start(ctrl.SetupSignalHandler())`, layered over
 * {@link Manager}: see {@link operatorCommand} for what `run` wires.
 */
import {
  type CliIO,
  type Command,
  checkCommand,
  defineCommand,
  type Flag,
  type FlagSet,
  imageReference,
  kubeName,
  runCli,
  stringFlag,
} from '../cli/index.ts'
import { toYaml } from '../config/index.ts'
import { installManifests } from './install-manifests.ts'
import { type OperatorRunOptions, operatorCommand, type runOperatorWith } from './operator-command.ts'
import type { OperatorSpec, ProcessFlags } from './operator-spec.ts'
import { rulePermissions } from './rule-permissions.ts'

/**
 * The `check` command for `spec`: preflight with the operator's flags, checking that `spec.check`'s
 * resources are served and its RBAC rules are granted in every `--namespace` (plus the Lease rights
 * with `--leader-elect`); prints the report (with the rules that would grant what is missing) and exits
 * 0 when all passed, 1 otherwise.
 */
export function operatorCheckCommand<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
): ReturnType<typeof checkCommand> {
  return checkCommand({
    sharding: !!spec.flags && 'shard' in spec.flags,
    requirements: (o) => ({
      resources: [...(spec.check?.resources ?? [])],
      permissions: rulePermissions(spec.check?.rules ?? [], o.namespace),
    }),
  })
}

/** The environment prefix of operator `name`'s flags: `secret-sync` reads `SECRET_SYNC_QPS`. */
export function envPrefixOf(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_`
}

/**
 * The `manifests` command for `spec`: prints {@link installManifests} as one YAML stream for
 * `kubectl apply -f -`, with the Deployment's `--image` and the `--install-namespace`.
 */
export function operatorManifestsCommand<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
): Command<{ image: Flag<string>; 'install-namespace': Flag<string> }> {
  return defineCommand({
    description: 'Print the CRDs, RBAC (from check), Namespace and Deployment that install the operator',
    flags: {
      image: stringFlag('Container image of the Deployment.', {
        default: `${spec.name}:latest`,
        schema: imageReference(),
        placeholder: 'image',
      }),
      'install-namespace': stringFlag('Namespace of the Deployment, ServiceAccount and Lease.', {
        default: `${spec.name}-system`,
        schema: kubeName('label', 'a namespace'),
        placeholder: 'namespace',
      }),
    },
    run: (o) =>
      void process.stdout.write(
        installManifests(spec, { image: o.image, namespace: o.installNamespace })
          .map((d) => toYaml(d))
          .join('---\n'),
      ),
  })
}

/**
 * Runs `spec` as the process's command line: `<name> [run|check|manifests] [flags]`. Exits the process (through
 * `io.exit`): 0 after a clean stop on SIGTERM/SIGINT and for `--help`, 2 for a bad command line (one
 * line naming the flag) or a start-up mistake (one line, see {@link runOperatorWith}), 1 when the
 * manager fails otherwise or leadership is lost; `check` exits 0 or 1. `io`
 * replaces argv, the environment, the output streams and `exit`, and may carry the version for the
 * `starting` line and a stop signal in place of SIGTERM/SIGINT.
 *
 * @example
 * await runOperator({
 *   name: 'mirror',
 *   check: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch'] }] },
 *   controllers: ({ manager, recorder }) => [{ name: 'mirror', for: …, reconcile: … }],
 * })
 */
export function runOperator<F extends FlagSet & ProcessFlags>(
  spec: OperatorSpec<F>,
  io: Partial<CliIO> & OperatorRunOptions = {},
): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: each command has its own flag set, as in runCli's table.
  const commands: Record<string, Command<any>> = {
    run: operatorCommand(spec, {
      version: io.version,
      signal: io.signal,
    }),
    check: operatorCheckCommand(spec),
    manifests: operatorManifestsCommand(spec),
  }
  return runCli(
    {
      name: spec.name,
      description: spec.description || undefined,
      defaultCommand: 'run',
      commands,
      envPrefix: spec.envPrefix || envPrefixOf(spec.name),
    },
    io,
  )
}
