/**
 * @module teardown — the soak's last phase: delete every AppService and NodeConfig through the
 * operator and the agents, check the database and the node roots end empty, stop sampling, and
 * SIGTERM every process.
 */
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { CONVERGED, DATABASE, NODE_FILES } from './checker.ts'
import type { SoakRun } from './context.ts'
import type { Fleet } from './fleet.ts'
import { sleep } from './pace.ts'
import type { Plane } from './plane.ts'
import { TEARDOWN_TIMEOUT_MS } from './settings.ts'
import { managedFiles, RUN_LABEL } from './workload.ts'

/** Between two looks at what is left. */
const TEARDOWN_POLL_MS = 1000
/** How long the processes get to exit on SIGTERM. */
const STOP_GRACE_MS = 20_000

/** Runs the teardown phase. */
export async function tearDown(ctx: SoakRun, plane: Plane, f: Fleet): Promise<void> {
  const { rel, log, inv } = ctx
  const { admin: a, namespaces, nodes, db: d } = plane
  const teardownStart = rel()
  for (const ns of namespaces)
    await a
      .resource(APPSERVICES, ns)
      .deleteCollection({})
      .catch((err) => log(`deleting AppServices in ${ns}: ${(err as Error).message}`))
  await a
    .resource(NODECONFIGS)
    .deleteCollection({ labelSelector: `${RUN_LABEL}=${ctx.run}` })
    .catch((err) => log(`deleting NodeConfigs: ${(err as Error).message}`))
  const teardownDeadline = Date.now() + TEARDOWN_TIMEOUT_MS
  let appsLeft = -1
  let filesLeft = -1
  while (Date.now() < teardownDeadline) {
    appsLeft = 0
    for (const ns of namespaces)
      appsLeft += (
        await a
          .resource(APPSERVICES, ns)
          .list()
          .catch(() => ({ items: [1] }))
      ).items.length
    filesLeft = 0
    for (const n of nodes) filesLeft += (await managedFiles(n.root)).length
    if (appsLeft === 0 && filesLeft === 0 && d.entries.size === 0) break
    await sleep(TEARDOWN_POLL_MS)
  }
  inv.check(
    CONVERGED,
    appsLeft === 0,
    () => `${appsLeft} AppServices still there ${TEARDOWN_TIMEOUT_MS / 1000} s after deleting them all`,
  )
  inv.check(
    DATABASE,
    d.entries.size === 0,
    () => `${d.entries.size} database entries left after deleting every AppService`,
  )
  inv.check(
    NODE_FILES,
    filesLeft === 0,
    () => `${filesLeft} files left on the nodes after deleting every NodeConfig`,
  )
  inv.check(
    DATABASE,
    new Set(d.created).size === d.created.length,
    () => 'a database entry was created twice',
  )
  ctx.samplers.abort()
  await Promise.all(ctx.samplerLoops)
  await f.stop(STOP_GRACE_MS)
  ctx.phases.teardown = rel() - teardownStart
}
