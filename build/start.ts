/**
 * @module build/start — `npm start`: see the operator work with one command.
 *
 * - With a cluster configured (`KUBECONFIG`, `~/.kube/config`, or in-cluster), runs the
 *   operator against it: `node src/main.ts run <extra args>`.
 * - Without one, starts the local control plane of the test environment (etcd,
 *   kube-apiserver, kube-controller-manager, kube-scheduler, KWOK with a fake node),
 *   installs the AppService CRD, starts the database API stand-in, creates a sample
 *   AppService in namespace `demo`, and runs the operator against all of that. Ctrl-C
 *   stops everything.
 *
 * Extra arguments go to `edgeop run`: `npm start -- --log-format=text`.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './artifact.ts'

const extra = process.argv.slice(2)
const main = join(ROOT, 'src/main.ts')
const hasCluster =
  !!process.env.KUBECONFIG ||
  !!process.env.KUBERNETES_SERVICE_HOST ||
  existsSync(join(homedir(), '.kube/config'))

function runOperator(args: string[]): Promise<number> {
  const child = spawn(process.execPath, [main, 'run', ...args, ...extra], { stdio: 'inherit' })
  const forward = (sig: NodeJS.Signals): void => void child.kill(sig)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)))
}

if (hasCluster) {
  process.stderr.write('npm start: using the configured cluster (KUBECONFIG, ~/.kube/config or in-cluster)\n')
  process.exitCode = await runOperator([])
} else {
  const { getTestEnv } = await import('../test/controlplane/env.ts')
  const { adminClient } = await import('../test/support/kube.ts')
  const { installAppServiceCrd } = await import('../test/support/appservice.ts')
  const { startDatabaseStandin } = await import('../test/standin/database-api.ts')
  const { APPSERVICES } = await import('../src/operators/appservice/api.ts')
  const { CORE_TYPES } = await import('../src/client/resource.ts')
  process.stderr.write(
    'npm start: no kubeconfig found; starting a local control plane (first run builds it from the Go module proxy)\n',
  )
  const env = await getTestEnv()
  await env.startControllers()
  const client = adminClient(env, env.server)
  await installAppServiceCrd(client)
  await client
    .resource(CORE_TYPES.namespaces)
    .apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
      { fieldManager: 'npm-start', force: true },
    )
  await client.resource(APPSERVICES, 'demo').apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'AppService',
      metadata: { name: 'hello', namespace: 'demo' },
      spec: { image: 'nginx:1.27', replicas: 2, database: { enabled: true } },
    },
    { fieldManager: 'npm-start', force: true },
  )
  await client.close()
  const db = await startDatabaseStandin()
  process.stderr.write(
    `npm start: control plane ready\n  export KUBECONFIG=${env.kubeconfig}\n  database API stand-in: ${db.url}\n  sample: AppService demo/hello (2 replicas, database enabled)\n  try: kubectl get appservices -n demo -w   (or edit spec.replicas and watch it follow)\n`,
  )
  process.exitCode = await runOperator([
    `--kubeconfig=${env.kubeconfig}`,
    `--database-api=${db.url}`,
    '--metrics-bind-address=127.0.0.1:8080',
    '--health-probe-bind-address=127.0.0.1:8081',
  ])
  await db.close()
  process.exit()
}
