/**
 * @module build/tools/go-tools — where the tests get their kustomize, helm, prometheus, promtool and
 * jaeger binaries.
 *
 * build/tools/build-go-tool.sh decides, in this order: `EDGEOP_KUSTOMIZE` / `EDGEOP_HELM` /
 * `EDGEOP_PROMETHEUS` / `EDGEOP_PROMTOOL` / `EDGEOP_JAEGER` (a prebuilt binary); else the version-keyed cache
 * (`$EDGEOP_BUILD_CACHE_DIR/bin/<tool>-<version>/<tool>`, prometheus and promtool both in
 * `prometheus-<version>/`; default ~/.cache/edgeop), which needs no Go; else a CGO_ENABLED=0
 * build from the Go module proxy, pinned by build/tools/<tool>/go.mod (prometheus and promtool:
 * build/tools/prometheus/go.mod; versions in build/tools/versions.env). No system package; `npm
 * run tools` builds all five ahead of the tests. Measured cold (empty Go build cache, modules
 * downloaded, 2 cores): kustomize 46 s of CPU, helm 231 s of CPU (wall time on a loaded machine was
 * 187 s and 726 s); prometheus 264 s of CPU (226 s user + 38 s system; 1,419 s wall on a machine
 * loaded by other builds), then promtool 96 s of CPU (81 + 15; 580 s wall) on the build cache
 * prometheus left, as `npm run tools` builds them (prometheus is built with `remove_all_sd`: no
 * cloud service discovery; promtool still compiles client-go for its Kubernetes SD check); jaeger (for the tracing test) about
 * 500 s of CPU (424 s user, 76 s system; 34 min of wall time on 2 cores at a load average of 15–29). kubectl (`kubectl kustomize`) was not chosen: even on the control
 * plane's warm build cache it took 35 s of CPU, about kustomize's cold cost, and cold it would
 * build most of k8s.io/kubernetes' client side.
 */
import { execFile, execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The script that finds or builds a tool and prints its path on its last stdout line. */
export const BUILD_GO_TOOL = join(dirname(fileURLToPath(import.meta.url)), 'build-go-tool.sh')

/** The tools build-go-tool.sh knows. */
export type GoTool = 'kustomize' | 'helm' | 'prometheus' | 'promtool' | 'jaeger'

/** The script's outcome as a path, or the error naming it: `failure` when it exited non-zero. */
function pathFrom(tool: GoTool, stdout: string, failure: unknown): string {
  if (failure !== undefined)
    throw new Error(`${tool} is unavailable: ${BUILD_GO_TOOL} failed (its reason is on stderr above)`, {
      cause: failure,
    })
  const path = stdout.trim().split('\n').pop()
  if (path === undefined || !path.startsWith('/'))
    throw new Error(`${tool} is unavailable: ${BUILD_GO_TOOL} printed no absolute path`)
  return path
}

/**
 * The absolute path of `tool`, building it on first use. The build's progress and any failure
 * reason (no Go, a bad override variable) go to our stderr; a failure throws an error naming the
 * script.
 */
export function goToolPath(tool: GoTool, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return pathFrom(
      tool,
      execFileSync('bash', [BUILD_GO_TOOL, tool], {
        encoding: 'utf8',
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
      undefined,
    )
  } catch (err) {
    if (err instanceof Error && err.message.startsWith(`${tool} is unavailable`)) throw err
    return pathFrom(tool, '', err)
  }
}

/**
 * {@link goToolPath} without blocking the event loop (a runner that reads its children's output
 * while a tool builds). Rejects with the same error.
 */
export function goToolPathAsync(tool: GoTool, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [BUILD_GO_TOOL, tool], { encoding: 'utf8', env }, (err, stdout) => {
      try {
        resolve(pathFrom(tool, stdout, err ?? undefined))
      } catch (e) {
        reject(e)
      }
    })
    child.stderr?.pipe(process.stderr)
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const tool of ['kustomize', 'helm', 'prometheus', 'promtool', 'jaeger'] as const)
    process.stdout.write(`${tool}: ${goToolPath(tool)}\n`)
}
