/**
 * @module build/start-install — `npm start` against an existing cluster: when the AppService
 * CRD is missing, runs `edgeop install` (CRDs and RBAC, server-side apply) first and says so,
 * instead of letting the operator stop at once with "the CRD is not installed".
 */
import { spawn } from 'node:child_process'
import { KubeClient } from '../src/client/kube-client.ts'
import { CORE_TYPES } from '../src/client/resource.ts'
import { loadClusterConfig } from '../src/config/load.ts'
import { appServiceCrd } from '../src/operators/appservice/api.ts'
import { ApiError } from '../src/transport/api-error.ts'

/** Whether the cluster `loadClusterConfig` selects serves the AppService CRD. */
async function crdInstalled(): Promise<boolean> {
  const client = new KubeClient(await loadClusterConfig({}))
  try {
    await client.resource(CORE_TYPES.customResourceDefinitions).get(appServiceCrd().metadata.name)
    return true
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return false
    throw err
  } finally {
    await client.close()
  }
}

/**
 * Runs `node <main> install` when the AppService CRD is missing; its exit code (0 when nothing
 * was needed). Its output goes to ours, after one line saying why it runs.
 */
export async function installIfCrdMissing(main: string, log: (line: string) => void): Promise<number> {
  if (await crdInstalled()) return 0
  log('npm start: the AppService CRD is not installed: running `edgeop install` (CRDs and RBAC)')
  const child = spawn(process.execPath, [main, 'install'], { stdio: ['ignore', 'inherit', 'inherit'] })
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)))
  log(
    code === 0
      ? 'npm start: installed the CRDs and RBAC'
      : `npm start: edgeop install failed (exit code ${code})`,
  )
  return code
}
