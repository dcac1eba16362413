/**
 * @module demo-on-node — `npm start -- --real-node`'s part on the real node: run by probe-node.sh
 * (EDGEOP_NODE_THEN) once the node is Ready. Installs the chart with `helm install`, its only value
 * the database stand-in's address (`extraArgs`, as an administrator names their database service),
 * creates the sample AppService `demo/hello` (the pause image the probe builds: there is no
 * registry), prints how to watch it, and runs until SIGTERM or SIGINT; the probe then tears the
 * node down.
 *
 * Stopping: build/start-real-node.ts writes STOP_FILE in the probe's work directory, then sends
 * SIGTERM to the pid in PID_FILE if there is one. This script writes its pid (with its
 * handlers in place) before it looks for the stop file, so a stop is never missed.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PID_FILE, STOP_FILE } from '../../build/start-real-node.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceWhere, condition } from '../support/appservice.ts'
import { CHART_DEFAULTS, operatorRunning } from './install-checks.ts'
import { APP_IMAGE, run, runOnNode, WAIT_MS } from './node-cluster.ts'

const work = process.env.EDGEOP_NODE_WORK!
const log = (line: string) => process.stderr.write(`${line}\n`)

// Everything this process holds (the stand-in, the client) ends with it; the probe tears down the rest.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0))
writeFileSync(join(work, PID_FILE), String(process.pid))
if (existsSync(join(work, STOP_FILE))) process.exit(0)

await runOnNode(async (client) => {
  const db = await startDatabaseStandin(0, process.env.EDGEOP_NODE_IP)
  log('npm start: installing the chart on the node (helm install)')
  await run(
    process.env.HELM!,
    [
      'install',
      'edgeop',
      'charts/edgeop',
      '--namespace',
      CHART_DEFAULTS.namespace,
      '--create-namespace',
      '--set',
      `extraArgs[0]=--database-api=${db.url}`,
    ],
    { env: { ...process.env, HOME: work }, maxBuffer: 16 << 20 },
  )
  await operatorRunning(client, CHART_DEFAULTS)
  await client
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } })
  const apps = client.resource<AppService>(APPSERVICES, 'demo')
  await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'hello' },
    spec: { image: APP_IMAGE, replicas: 2, port: 8080, database: { enabled: true, class: 'small' } },
  } as AppService)
  await appServiceWhere(
    apps,
    'hello',
    (a) => condition(a, 'Ready')?.status === 'True',
    'AppService demo/hello Ready',
    WAIT_MS,
  )
  // The apiserver listens inside the node's network namespace: enter it to reach it.
  const enter = `nsenter --net=/proc/${process.pid}/ns/net --`
  log(
    [
      'npm start: real node ready: AppService demo/hello is Ready (2 pods of the pause image, its database entry made)',
      `  the apiserver is inside the node's network namespace: ${enter} kubectl --kubeconfig=${process.env.KUBECONFIG} get appservices -n demo -w`,
      `  database API stand-in: ${db.url} (from inside: ${enter} curl ${db.url}/v1/databases)`,
      `  logs of the node (kubelet, containerd, pods): ${work}`,
      '  Ctrl-C stops the operator, tears the node and the control plane down and removes their files',
    ].join('\n'),
  )
  // Until a signal ends the process.
  await new Promise<never>(() => setInterval(() => {}, 60_000))
})
