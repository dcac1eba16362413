/**
 * @module rendered-manifests — config/'s overlays and charts/edgeop as a cluster admin renders
 * them (kustomize build, helm template, with the binaries build/tools builds), and the slice of
 * the operator that must be the same whichever way it is installed.
 */
import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { goToolPath } from '../../build/tools/go-tools.ts'
import type { KubeObject } from '../../src/core/types.ts'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')
const HELM_HOME = join(tmpdir(), `edgeop-helm-${process.pid}`)
process.once('exit', () => rmSync(HELM_HOME, { recursive: true, force: true }))
/** The chart's directory. */
export const CHART = join(ROOT, 'charts/edgeop')

/** The objects of a multi-document YAML text (empty documents dropped). */
export function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o === 'object')
}

/** `kustomize build config/<overlay>` (or of `overlay` itself when it is an absolute path). */
export async function kustomizeBuild(overlay: string): Promise<KubeObject[]> {
  const dir = isAbsolute(overlay) ? overlay : join(ROOT, 'config', overlay)
  const { stdout } = await run(goToolPath('kustomize'), ['build', dir], {
    maxBuffer: 16 << 20,
  })
  return parseObjects(stdout)
}

/** Runs helm with `args`; rejects with helm's stderr in the message when it fails. */
export async function helm(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await run(goToolPath('helm'), args, {
      maxBuffer: 16 << 20,
      // Helm's caches and config in a scratch directory: nothing of the user's is read or written.
      env: {
        PATH: process.env.PATH,
        // client-go's discovery cache goes to $HOME/.kube/cache (the working directory without HOME).
        HOME: HELM_HOME,
        HELM_CACHE_HOME: join(HELM_HOME, 'cache'),
        HELM_CONFIG_HOME: join(HELM_HOME, 'config'),
        HELM_DATA_HOME: join(HELM_HOME, 'data'),
        ...env,
      },
    })
    return stdout
  } catch (err) {
    const e = err as { stderr?: string; message: string }
    throw new Error(`helm ${args[0]} failed: ${(e.stderr ?? e.message).trim().slice(0, 2000)}`)
  }
}

/**
 * `helm template <release> charts/edgeop --namespace <namespace> <args>` (CRDs included); `env` as
 * {@link helm}'s (e.g. `KUBECONFIG` for `--dry-run=server`, whose `lookup` reads the cluster).
 */
export async function helmTemplate(
  release: string,
  namespace: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<KubeObject[]> {
  return parseObjects(
    await helm(
      [
        'template',
        release,
        CHART,
        '--namespace',
        namespace,
        ...(args.includes('--skip-crds') ? [] : ['--include-crds']),
        ...args,
      ],
      env,
    ),
  )
}

type Container = { args: string[]; securityContext: unknown; resources: unknown; image: string }
type PodSpec = {
  securityContext: unknown
  terminationGracePeriodSeconds: number
  containers: Container[]
}

/** The one object of `kind` whose name ends in `suffix`. */
export function one(objects: KubeObject[], kind: string, suffix = ''): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (o.metadata.name ?? '').endsWith(suffix))
  if (found.length !== 1) throw new Error(`expected one ${kind} *${suffix}, found ${found.length}`)
  return found[0]!
}

/** What makes the operator the operator, whichever way it was rendered. */
export interface OperatorShape {
  replicas: number
  args: string[]
  image: string
  podSecurityContext: unknown
  securityContext: unknown
  resources: unknown
  terminationGracePeriodSeconds: number
  clusterRules: unknown
  leaseRules: unknown
  disruptionBudget: unknown
}

/** The operator's {@link OperatorShape} in `objects` (deploy/, a kustomize build or a helm template). */
export function operatorShape(objects: KubeObject[]): OperatorShape {
  const dep = one(objects, 'Deployment', '-appservice') as KubeObject & {
    spec: { replicas: number; template: { spec: PodSpec } }
  }
  const pod = dep.spec.template.spec
  const container = pod.containers[0]!
  const rules = (kind: string, suffix: string) =>
    (one(objects, kind, suffix) as KubeObject & { rules: unknown }).rules
  return {
    replicas: dep.spec.replicas,
    args: container.args,
    image: container.image,
    podSecurityContext: pod.securityContext,
    securityContext: container.securityContext,
    resources: container.resources,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    clusterRules: rules('ClusterRole', '-appservice'),
    leaseRules: rules('Role', '-leader-election'),
    disruptionBudget: (one(objects, 'PodDisruptionBudget', '-appservice').spec as { maxUnavailable: unknown })
      .maxUnavailable,
  }
}
