/**
 * @module operator-spec — what a user writes to make an operator: its name, flags and controllers
 * ({@link OperatorSpec}), and what its `controllers` function receives ({@link OperatorContext}).
 */
import type { FlagSet, FlagValues, OPERATOR_FLAGS } from '../cli/index.ts'
import type { KubeClient } from '../client/index.ts'
import type { ClusterConfig } from '../config/index.ts'
import type { Controller, ControllerOptions } from '../controller/index.ts'
import type { KubeObject, LogFields, Logger, LogLevel } from '../core/index.ts'
import type { LogFormat } from '../logging/index.ts'
import type { ClusterSet, Manager, ResourceRequirement } from '../manager/index.ts'
import type { customResourceDefinition, EventRecorder } from '../objects/index.ts'
import type { RbacRule } from './rule-permissions.ts'
import type { OperatorWebhooks } from './webhooks.ts'

/** What an operator's `controllers` function receives: everything already wired. */
export interface OperatorContext<F extends FlagSet = typeof OPERATOR_FLAGS> {
  /** The parsed flags (and their environment variables, see {@link OperatorSpec.envPrefix}), camelCased: `options.leaderElect`. */
  options: FlagValues<F>
  /** The cluster client; its requests count in `rest_client_*` metrics. */
  client: KubeClient
  /** The configuration the client was built from (its `namespace`, `source`). */
  config: ClusterConfig
  /** The manager the controllers are added to; its `factory` builds their informers. */
  manager: Manager
  /** Events through `client`, reported as {@link OperatorSpec.reportingController}; flushed on stop. */
  recorder: EventRecorder
  /** The process logger. */
  log: Logger
  /**
   * The member clusters of `--clusters-file` (when the flag set has it and it is given), engaged as the
   * file lists them; leader election stays in the home cluster (`client`'s).
   */
  clusters: ClusterSet | undefined
}

/** The flags {@link operatorCommand} reads itself; a spec's flag set must contain them. */
export type ProcessFlags = Pick<
  typeof OPERATOR_FLAGS,
  | 'kubeconfig'
  | 'context'
  | 'qps'
  | 'burst'
  | 'log-level'
  | 'log-format'
  | 'metrics-bind-address'
  | 'health-probe-bind-address'
  | 'shutdown-grace-period'
>

/** An operator: its name, flags, controllers and what `check` verifies. */
export interface OperatorSpec<F extends FlagSet & ProcessFlags = typeof OPERATOR_FLAGS> {
  /** Names the process in its logs (`starting <name>`) and, for {@link runOperator}, the binary. */
  name: string
  /** One line for `--help`. */
  description?: string
  /**
   * The flag set. Default {@link OPERATOR_FLAGS} (controller-runtime's names); add your own by spreading
   * it: `{ ...OPERATOR_FLAGS, 'database-api': stringFlag('…') }`. Leader election runs when the values
   * hold `leaderElect: true` (so a set without the `leader-election-*` flags never elects).
   */
  flags?: F
  /** Checks across flags, after each flag's own: one line naming the flag, or undefined (exit 2). Default: {@link validateOperatorOptions} when `flags` is absent. */
  validate?(options: FlagValues<F>): string | undefined
  /** Checks that need the machine (a directory is writable): one line naming the flag, or undefined (exit 2). */
  precheck?(options: FlagValues<F>): Promise<string | undefined> | string | undefined
  /**
   * The controllers to run, built on the wired parts; each goes through `manager.add`, except one this
   * function already added with `context.manager.add` (the same object), which is kept as added. Two
   * controllers of one name: `EDGEOP_ERR_INVALID` naming it (exit 1).
   */
  controllers(context: OperatorContext<F>): Iterable<Controller<KubeObject> | ControllerOptions<KubeObject>>
  /**
   * The logger. Default: edgeop's, at `--log-level` in `--log-format` on stderr. A function receives
   * those two flags (e.g. `({ level }) => consoleLogger(console, { level })`).
   */
  logger?: Logger | ((flags: { level: LogLevel; format: LogFormat }) => Logger)
  /** Events' `reportingController`, e.g. `example.com/mirror`. Default {@link name}. */
  reportingController?: string
  /** Events' `reportingInstance`. Default `$HOSTNAME` (the pod's name), else {@link name}. */
  instance?(options: FlagValues<F>): string
  /** Fields of the `starting` log line. */
  startFields?(options: FlagValues<F>): LogFields
  /** Appended to the error line when a watched resource is not served (a CRD missing): how to install it. */
  installHint?: string
  /**
   * The CustomResourceDefinitions of the operator's own kinds (`customResourceDefinition(...)`): the
   * `manifests` command prints them first.
   */
  crds?: readonly ReturnType<typeof customResourceDefinition>[]
  /**
   * What `check` verifies: resources that must be served and the RBAC rules the operator needs. The
   * `manifests` command grants exactly these rules (and the Lease rights `--leader-elect` needs).
   */
  check?: {
    /** Resources that must be served (a CRD installed). */
    resources?: readonly ResourceRequirement[]
    /** The RBAC rules the operator needs, checked in every `--namespace`. */
    rules?: readonly RbacRule[]
  }
  /**
   * Environment variable prefix of the flags. Default for {@link runOperator}: the name upper-cased,
   * `-` as `_`, then `_` (`secret-sync`: `SECRET_SYNC_`); a `runCli` table's own otherwise (`EDGEOP_`).
   */
  envPrefix?: string
  /**
   * Admission webhooks served on `--webhook-bind-address` (spread `WEBHOOK_FLAGS` into the flag set) by
   * every replica, leader or not, started after the controllers are added.
   */
  webhooks?: OperatorWebhooks<OperatorContext<F>>
}
