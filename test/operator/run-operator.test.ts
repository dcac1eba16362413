/**
 * runOperator without a cluster: its command line (controller-runtime's flag names, validation, exit
 * codes), the logger choice, and the RBAC rules turned into `check`'s permission requests.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { EventHandler } from '../../src/cache/listener.ts'
import { type FlagSet, OPERATOR_FLAGS, SHARD_FLAGS, validateOperatorOptions } from '../../src/cli/index.ts'
import type { Controller } from '../../src/controller/controller.ts'
import { type Logger, type LogLevel, noopLogger } from '../../src/core/log.ts'
import type { LogFormat } from '../../src/logging/logger.ts'
import type { Manager } from '../../src/manager/manager.ts'
import type { OperatorContext, OperatorSpec, ProcessFlags } from '../../src/operator/operator-spec.ts'
import { rulePermissions } from '../../src/operator/rule-permissions.ts'
import { runOperator } from '../../src/operator/run-operator.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { unaskedKubeconfig } from '../support/unasked-cluster.ts'

/** Runs `runOperator` with `argv`, capturing output and the exit code; `controllers` must not be reached. */
async function mirror(argv: string[], logger?: (f: { level: LogLevel; format: LogFormat }) => void) {
  let stdout = ''
  let stderr = ''
  let code: number | undefined
  let built = 0
  await runOperator(
    {
      name: 'mirror',
      ...(logger
        ? {
            logger: (f) => {
              logger(f)
              return noopLogger
            },
          }
        : {}),
      controllers: () => {
        built++
        return []
      },
    },
    {
      argv,
      env: {},
      stdout: { write: (s) => (stdout += s) },
      stderr: { write: (s) => (stderr += s) },
      exit: (c) => {
        code = c
      },
      signal: AbortSignal.abort(),
    },
  )
  return { stdout, stderr, code, built }
}

describe('runOperator: the command line', () => {
  test('--help lists run and check and controller-runtime’s flag names, exit 0', async () => {
    const r = await mirror(['--help'])
    assert.equal(r.code, 0)
    assert.match(r.stdout, /^Usage: mirror \[command\] \[flags\]/)
    assert.match(r.stdout, /^ {2}run +Run mirror \(default\)$/m)
    assert.match(r.stdout, /^ {2}check +Check that the cluster answers/m)
    for (const flag of [
      'metrics-bind-address',
      'health-probe-bind-address',
      'leader-elect',
      'leader-election-id',
      'log-level',
      'shutdown-grace-period',
    ])
      assert.match(r.stdout, new RegExp(`--${flag}\\b`), flag)
  })

  test('a bad value or combination: one line naming the flag, exit 2, nothing built', async () => {
    for (const [argv, line] of [
      [['--leader-elect'], 'mirror: --leader-election-id: required with --leader-elect'],
      [['--metrics-bind-address=nowhere'], /^mirror: --metrics-bind-address: expected \[host\]:port/],
      [['check', '--qps=fast'], 'mirror: --qps: expected a number, got "fast"'],
    ] as const) {
      const r = await mirror([...argv])
      assert.equal(r.code, 2, argv.join(' '))
      assert.equal(r.stderr.split('\n').length, 2, 'one line')
      if (typeof line === 'string') assert.equal(r.stderr.trim(), line)
      else assert.match(r.stderr, line)
      assert.equal(r.built, 0)
    }
  })

  test('a configuration that cannot be loaded: exit 2, after the logger got the log flags', async () => {
    const seen: { level: LogLevel; format: LogFormat }[] = []
    const r = await mirror(
      ['--kubeconfig=/nonexistent/kubeconfig', '--log-level=debug', '--log-format=text'],
      (f) => seen.push(f),
    )
    assert.equal(r.code, 2)
    assert.equal(r.stderr, '', 'the logger has the line (startup-mistakes.test.ts)')
    assert.deepEqual(seen, [{ level: 'debug', format: 'text' }])
    assert.equal(r.built, 0)
  })
})

describe('runOperator: registering controllers', () => {
  // A cluster that is never asked: the controller's source is in memory, nothing is watched.
  const kubeconfig = unaskedKubeconfig()

  /** The guide's pattern: a function that adds the controller with `manager.add` and returns it. */
  function addSecretSync(manager: Manager, reconciled: string[], then = () => {}): Controller {
    const source = {
      describe: 'secrets in memory',
      addEventHandler: (h: EventHandler) => {
        h.onAdd?.({ metadata: { namespace: 'ns', name: 'a', resourceVersion: '1', uid: 'u' } }, true)
        return { hasSynced: () => true, whenSynced: async () => {}, pending: 0, remove() {} }
      },
    }
    return manager.add({
      name: 'secretsync',
      for: { source, kind: 'Secret', group: '', namespaced: true },
      reconcile: async (r) => {
        reconciled.push(r.name)
        then()
      },
    })
  }

  /** Runs operator `secretsync` with `controllers` against the unasked cluster until `signal`. */
  async function secretsync(
    controllers: OperatorSpec['controllers'],
    signal: AbortSignal,
    logger: Logger = noopLogger,
  ) {
    let stderr = ''
    let code: number | undefined
    await runOperator(
      { name: 'secretsync', logger, controllers },
      {
        argv: [`--kubeconfig=${kubeconfig}`, '--metrics-bind-address=0', '--health-probe-bind-address=0'],
        env: {},
        stdout: { write: () => {} },
        stderr: { write: (s) => (stderr += s) },
        exit: (c) => {
          code = c
        },
        signal,
      },
    )
    return { stderr, code }
  }

  test('F1: a controller added with manager.add and also returned from controllers runs once, exit 0', async () => {
    const reconciled: string[] = []
    const stop = new AbortController()
    const r = await secretsync(
      ({ manager }) => [addSecretSync(manager, reconciled, () => stop.abort())],
      stop.signal,
    )
    assert.equal(r.stderr, '')
    assert.equal(r.code, 0)
    assert.deepEqual(reconciled, ['a'])
  })

  test('F1: a controller returned from controllers under a name already added: one line naming it, exit 2', async () => {
    const log = recordingLogger(['error'])
    const r = await secretsync(
      ({ manager }) => {
        const c = addSecretSync(manager, [])
        return [
          {
            name: c.name,
            for: { source: c.source, kind: 'Secret', group: '', namespaced: true },
            reconcile: async () => {},
          },
        ]
      },
      AbortSignal.abort(),
      log,
    )
    assert.equal(r.code, 2)
    assert.equal(r.stderr, '')
    assert.equal(log.lines.length, 1, 'one line')
    assert.match(
      log.lines[0]!.msg,
      /^secretsync cannot start: controller "secretsync" is added twice: add it once/,
    )
  })
})

describe('runOperator: the flags offered are the flags applied', () => {
  const kubeconfig = unaskedKubeconfig()
  const quiet = ['--metrics-bind-address=0', '--health-probe-bind-address=0']

  /** Runs `spec` with `argv` (plus the unasked cluster) until start-up ends; what `controllers` saw. */
  async function start<F extends FlagSet & ProcessFlags>(
    spec: Omit<OperatorSpec<F>, 'name' | 'controllers'>,
    argv: string[],
    env: Record<string, string> = {},
  ) {
    let stdout = ''
    let stderr = ''
    let code: number | undefined
    let seen: OperatorContext<F> | undefined
    await runOperator<F>(
      {
        name: 'secret-sync',
        logger: noopLogger,
        ...spec,
        controllers: (context) => {
          seen = context
          return []
        },
      } as OperatorSpec<F>,
      {
        argv: [`--kubeconfig=${kubeconfig}`, ...quiet, ...argv],
        env,
        stdout: { write: (s) => (stdout += s) },
        stderr: { write: (s) => (stderr += s) },
        exit: (c) => {
          code = c
        },
        signal: AbortSignal.abort(),
      },
    )
    return { stdout, stderr, code, seen }
  }

  test('F2: an operator with the default flags is not offered --shard: not in --help, refused in one line, exit 2', async () => {
    const help = await start({}, ['--help'])
    assert.doesNotMatch(help.stdout, /--shard/)
    const r = await start({}, ['--shard', '--leader-election-id=ring'])
    assert.equal(r.code, 2)
    assert.equal(r.stderr, 'secret-sync: unknown flag --shard\n')
    assert.equal(r.seen, undefined)
  })

  test('F2: an operator that spreads SHARD_FLAGS gets --shard applied: its manager has the ring’s shard', async () => {
    const flags = { ...OPERATOR_FLAGS, ...SHARD_FLAGS }
    const r = await start({ flags, validate: validateOperatorOptions }, [
      '--shard',
      '--leader-election-id=ring',
    ])
    assert.equal(r.stderr, '')
    assert.equal(r.code, 0)
    assert.ok(r.seen?.manager.shard, 'manager.shard')
    assert.match(r.seen.manager.shard.selector, /shard\.edgeop\.io\/ring/)
    const plain = await start({ flags }, [])
    assert.equal(plain.seen?.manager.shard, undefined)
  })

  test('F2: every flag runOperator offers by default is one it applies (a new flag must be wired, then listed here)', () => {
    // Where each is applied: runOperatorWith in src/operator/operator-command.ts, with the test that shows it.
    const applied = {
      kubeconfig: 'loadClusterConfig (a bad path: exit 2, start-up mistakes below)',
      context: 'loadClusterConfig',
      namespace: "the manager factory's namespaces (F6 above)",
      'leader-elect': 'Manager leaderElection',
      'leader-election-id': 'the Lease name (F2 above: the ring)',
      'leader-election-namespace': "the Lease namespace, else the config's",
      'leader-election-lease-duration': 'Manager leaderElection',
      'leader-election-renew-deadline': 'Manager leaderElection',
      'leader-election-retry-period': 'Manager leaderElection',
      'metrics-bind-address': 'Manager metricsBindAddress (these tests pass 0)',
      'metrics-secure': 'Manager secureMetrics',
      'metrics-cert-path': 'secureMetrics.certDir',
      'metrics-cert-name': 'secureMetrics.certName',
      'metrics-cert-key': 'secureMetrics.keyName',
      'health-probe-bind-address': 'Manager healthProbeBindAddress',
      'max-concurrent-reconciles': 'Manager maxConcurrentReconciles (F6 above)',
      qps: 'KubeClient qps',
      burst: 'KubeClient burst',
      'log-level': 'the logger (test above)',
      'log-format': 'the logger (test above)',
      'shutdown-grace-period': 'Manager shutdownGracePeriodMs',
      'cache-dir': 'factory.persistTo and its lock',
      tracing: 'otlpTracer',
    }
    assert.deepEqual(Object.keys(OPERATOR_FLAGS).sort(), Object.keys(applied).sort())
  })

  test('F6: --namespace scopes the informers of a user’s operator; several need multiNamespaceInformer(spec)', async () => {
    const secrets = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true }
    const one = await start({}, ['--namespace=tenant-a'])
    const inf = one.seen!.manager.factory.informer({ type: secrets })
    assert.match(inf.describe, /tenant-a/)
    const two = await start({}, ['--namespace=tenant-a', '--namespace=tenant-b'])
    const multi = two.seen!.manager.factory.multiNamespaceInformer({ type: secrets })
    assert.deepEqual(multi.namespaces, ['tenant-a', 'tenant-b'])
    assert.throws(() => two.seen!.manager.factory.informer({ type: secrets }), {
      code: 'EDGEOP_ERR_INVALID',
      message: 'secrets: --namespace names several: use multiNamespaceInformer(spec)',
    })
    const all = await start({}, [])
    assert.doesNotMatch(all.seen!.manager.factory.informer({ type: secrets }).describe, /tenant/)
  })

  test('F6: --max-concurrent-reconciles is the worker count of each controller added from options without its own', async () => {
    const r = await start({}, ['--max-concurrent-reconciles=4'])
    const source = {
      describe: 'nothing',
      addEventHandler: () => ({ hasSynced: () => true, whenSynced: async () => {}, pending: 0, remove() {} }),
    }
    const spec = { for: { source, kind: 'Secret', group: '', namespaced: true }, reconcile: async () => {} }
    assert.equal(r.seen!.manager.add({ name: 'a', ...spec }).maxConcurrentReconciles, 4)
    assert.equal(
      r.seen!.manager.add({ name: 'b', ...spec, maxConcurrentReconciles: 2 }).maxConcurrentReconciles,
      2,
    )
  })

  test('F6: a user’s operator reads its flags from <NAME>_* variables (or its envPrefix), not EDGEOP_*', async () => {
    const own = await start({}, [], { SECRET_SYNC_NAMESPACE: 'tenant-a', EDGEOP_QPS: 'fast' })
    assert.equal(own.stderr, '')
    assert.deepEqual(own.seen?.options.namespace, ['tenant-a'])
    assert.match((await start({}, ['--help'])).stdout, /env SECRET_SYNC_QPS\b/)
    const prefixed = await start({ envPrefix: 'SYNC_' }, [], { SYNC_NAMESPACE: 'tenant-b' })
    assert.deepEqual(prefixed.seen?.options.namespace, ['tenant-b'])
  })
})

describe('rulePermissions', () => {
  const rules = [
    { apiGroups: ['example.com'], resources: ['widgets', 'widgets/status'], verbs: ['get', 'patch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
  ]

  test('no namespace: one cluster-wide request per resource, subresources split off', () => {
    assert.deepEqual(rulePermissions(rules, []), [
      { group: 'example.com', resource: 'widgets', verbs: ['get', 'patch'] },
      { group: 'example.com', resource: 'widgets', subresource: 'status', verbs: ['get', 'patch'] },
      { group: '', resource: 'configmaps', verbs: ['list'] },
    ])
  })

  test('watched namespaces: one request per resource and namespace', () => {
    assert.deepEqual(
      rulePermissions([rules[1]!], ['a', 'b']).map((p) => `${p.resource}@${p.namespace}`),
      ['configmaps@a', 'configmaps@b'],
    )
  })
})
