/**
 * @module install-command — `<operator> install` and `<operator> uninstall`: the CRDs and RBAC an
 * operator needs, applied or removed by server-side apply, for clusters managed without kustomize
 * or Helm.
 *
 * `install` applies every object in order with the operator's field manager (forced, so a re-run
 * takes its fields back from an earlier `kubectl apply`) and waits for each CRD to be Established,
 * so the operator can start right after. `uninstall` refuses while any custom resource of the
 * operator's kinds exists (deleting a CRD deletes every object of its kind), unless `--force`;
 * then deletes the objects in reverse order. Namespaces are never deleted: they may hold more
 * than the operator.
 */
import { ApiError, KubeClient, type ResourceType } from '../client/index.ts'
import { loadClusterConfig } from '../config/index.ts'
import { errorMessage, type KubeObject } from '../core/index.ts'
import { booleanFlag } from './flags/flags.ts'
import { OPERATOR_FLAGS } from './flags/operator-flags.ts'
import { type Command, defineCommand, EXIT_FAILURE } from './run-cli.ts'

/**
 * How long `install` waits for a CRD to be Established: `kubectl wait`'s default timeout (30 s).
 * A healthy apiserver establishes a CRD within a second; past this something is wrong.
 */
export const CRD_ESTABLISHED_TIMEOUT_MS = 30_000
/** How often `install` re-reads a CRD while waiting for it to be Established. */
export const CRD_ESTABLISHED_POLL_MS = 250
/** Exit code of `uninstall` refusing because custom resources exist (distinct from a failure, 1). */
export const EXIT_RESOURCES_EXIST = 3

/** The client `install`/`uninstall` use (a {@link KubeClient} has it). */
export type InstallClient = Pick<KubeClient, 'resource' | 'mapper' | 'close'>

/** Options of {@link installCommands}. */
export interface InstallCommandOptions {
  /** What `install` applies, in order: CRDs first, then Namespaces, then what lives in them. */
  objects(): KubeObject[]
  /** The custom resource types whose objects make `uninstall` refuse without `--force`. */
  customResources: readonly ResourceType[]
  /** The server-side apply field manager (the operator's own). */
  fieldManager: string
  /** Where progress goes. Default `process.stdout`. */
  stdout?: { write(s: string): unknown }
  /** Where refusals and failures go. Default `process.stderr`. */
  stderr?: { write(s: string): unknown }
  /** Builds the client. Default: the cluster config `--kubeconfig`/`--context` select. */
  connect?(o: { kubeconfig: string | undefined; context: string | undefined }): Promise<InstallClient>
  /** Sleeps between CRD polls (injected by tests). Default: a timer. */
  sleep?(ms: number): Promise<void>
}

/** The connection flags, the operator's own (same names, defaults and environment variables). */
export const CONNECTION_FLAGS = { kubeconfig: OPERATOR_FLAGS.kubeconfig, context: OPERATOR_FLAGS.context }
const UNINSTALL_FLAGS = {
  ...CONNECTION_FLAGS,
  force: booleanFlag(
    'Delete the CRDs even while custom resources of their kinds exist (the apiserver then deletes those too).',
  ),
}

/** A client for the cluster `--kubeconfig`/`--context` select (the operator's rules). */
export async function connectFromFlags(o: {
  kubeconfig: string | undefined
  context: string | undefined
}): Promise<InstallClient> {
  const config = await loadClusterConfig({
    kubeconfig: o.kubeconfig || undefined,
    context: o.context || undefined,
  })
  return new KubeClient(config)
}

/** `Kind/name` or `Kind namespace/name`, for messages. */
function describe(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`
}

function established(crd: KubeObject): boolean {
  const conditions = (crd.status as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions
  return (conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')
}

/** Plural of a kind for a count in a message: "1 AppService", "2 AppServices". */
const counted = (n: number, kind: string, more: boolean) =>
  `${n}${more ? '+' : ''} ${kind}${n === 1 && !more ? '' : 's'}`

/**
 * The `install` and `uninstall` commands. Exit codes: 0 done; 1 a request failed (the message
 * names the object and the apiserver's reason); 2 a usage error; {@link EXIT_RESOURCES_EXIST}
 * when `uninstall` refused because custom resources exist.
 *
 * @example
 * commands: { ...installCommands({ objects: () => [crd, ...rbac], customResources: [WIDGETS], fieldManager: 'widget-operator' }) }
 */
export function installCommands(options: InstallCommandOptions): {
  install: Command<typeof CONNECTION_FLAGS>
  uninstall: Command<typeof UNINSTALL_FLAGS>
} {
  const out = options.stdout ?? process.stdout
  const err = options.stderr ?? process.stderr
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  const connect = options.connect ?? connectFromFlags

  async function waitEstablished(client: InstallClient, crd: KubeObject): Promise<void> {
    const crds = client.resource<KubeObject>(
      await client.mapper.forApiVersionKind(crd.apiVersion!, crd.kind!),
    )
    for (let waited = 0; ; waited += CRD_ESTABLISHED_POLL_MS) {
      if (established(await crds.get(crd.metadata.name!))) return
      if (waited >= CRD_ESTABLISHED_TIMEOUT_MS)
        throw new Error(
          `${describe(crd)} was applied but is not Established after ${CRD_ESTABLISHED_TIMEOUT_MS / 1000} s (kubectl describe crd ${crd.metadata.name} shows why)`,
        )
      await sleep(CRD_ESTABLISHED_POLL_MS)
    }
  }

  const install = defineCommand({
    description: 'Install the CRDs and RBAC by server-side apply (without kustomize or Helm)',
    flags: CONNECTION_FLAGS,
    async run(values) {
      const client = await connect(values)
      try {
        for (const o of options.objects()) {
          try {
            const type = await client.mapper.forApiVersionKind(o.apiVersion!, o.kind!)
            await client.resource(type).apply(o, { fieldManager: options.fieldManager, force: true })
            if (o.kind === 'CustomResourceDefinition') await waitEstablished(client, o)
          } catch (e) {
            err.write(`install: applying ${describe(o)} failed: ${errorMessage(e)}\n`)
            return EXIT_FAILURE
          }
          out.write(`applied ${describe(o)}\n`)
        }
        out.write(`installed (field manager ${options.fieldManager})\n`)
        return 0
      } finally {
        await client.close()
      }
    },
  })

  const uninstall = defineCommand({
    description: 'Remove what install applied; refuses while custom resources exist, unless --force',
    flags: UNINSTALL_FLAGS,
    async run(values) {
      const client = await connect(values)
      try {
        const remaining: string[] = []
        for (const type of options.customResources) {
          const list = await client
            .resource<KubeObject>(type)
            .listMetadata({ limit: 1 })
            .catch((e: unknown) => {
              // No CRD, no custom resources: nothing to protect.
              if (e instanceof ApiError && e.status === 404) return undefined
              throw e
            })
          // An empty metadata-only list may come back with `items: null`.
          const first = list?.items?.[0]
          if (first === undefined) continue
          const more = list?.metadata.continue !== undefined && list.metadata.continue !== ''
          const example = first.metadata.namespace
            ? `${first.metadata.namespace}/${first.metadata.name}`
            : first.metadata.name
          remaining.push(`${counted(list!.items.length, type.kind ?? type.resource, more)} (e.g. ${example})`)
        }
        if (remaining.length > 0 && !values.force) {
          err.write(
            `uninstall: refused: ${remaining.join(', ')} still exist; deleting the CRDs would delete every one of them. Delete them first, or pass --force.\n`,
          )
          return EXIT_RESOURCES_EXIST
        }
        const namespaces: string[] = []
        for (const o of [...options.objects()].reverse()) {
          if (o.kind === 'Namespace') {
            namespaces.push(o.metadata.name!)
            continue
          }
          try {
            const type = await client.mapper.forApiVersionKind(o.apiVersion!, o.kind!)
            await client.resource(type, o.metadata.namespace).delete(o.metadata.name!)
            out.write(`deleted ${describe(o)}\n`)
          } catch (e) {
            if (e instanceof ApiError && e.status === 404) {
              out.write(`${describe(o)} was not there\n`)
              continue
            }
            err.write(`uninstall: deleting ${describe(o)} failed: ${errorMessage(e)}\n`)
            return EXIT_FAILURE
          }
        }
        for (const ns of namespaces)
          out.write(
            `kept Namespace/${ns} (it may hold more than the operator): kubectl delete namespace ${ns}\n`,
          )
        out.write('uninstalled\n')
        return 0
      } finally {
        await client.close()
      }
    },
  })
  return { install, uninstall }
}
