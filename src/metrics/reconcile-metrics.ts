/**
 * @module reconcile-metrics — controller-runtime's reconcile metrics of one controller, with edgeop's parked-key gauges.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import { type ControllerObserver, RECONCILE_RESULTS, resultLabel } from './controller-observer.ts'
import type { MetricsRegistry } from './metrics-registry.ts'

/**
 * controller-runtime `controller_runtime_reconcile_time_seconds` buckets
 * (`pkg/internal/controller/metrics/metrics.go`): 5 ms … 60 s, dense below 1 s.
 */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]

/** The `reason` values of `edgeop_controller_parked_keys` (the controller's `ParkReason`). */
const PARK_REASONS = ['no_retry', 'attempts', 'time_budget'] as const

/**
 * Registers controller-runtime's reconcile metrics for `controller` (label `controller`) and
 * pre-initialises every series to 0, as controller-runtime does at start, so that rates exist before
 * the first error. `controller_runtime_max_concurrent_reconciles` is set to `maxConcurrentReconciles`.
 * As in controller-runtime, a terminal error, a panic or a timeout is also a `result="error"` and
 * counts in `controller_runtime_reconcile_errors_total`. edgeop adds `edgeop_controller_parked_keys`
 * (gauge, labels `controller`, `reason`) and `edgeop_controller_park_overflow_total`. The returned observer has every hook; pass it
 * as a controller's `observer` (the manager does that for every controller it is given).
 *
 * @example
 * const controller = new Controller({ name, ..., observer: reconcileMetrics(registry, name, 1) })
 */
export function reconcileMetrics(
  registry: MetricsRegistry,
  controller: string,
  maxConcurrentReconciles: number,
): Required<ControllerObserver> {
  const c = { controller }
  const labelNames = ['controller']
  const counter = (what: string, help: string) =>
    registry.counter({
      name: `controller_runtime_${what}_total`,
      help: `Total number of ${help} per controller`,
      labelNames,
    })
  const total = registry.counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
  })
  const errors = counter('reconcile_errors', 'reconciliation errors')
  const terminal = counter('terminal_reconcile_errors', 'terminal reconciliation errors')
  const panics = counter('reconcile_panics', 'reconciliation panics')
  const timeouts = counter('reconcile_timeouts', 'reconciliation timeouts')
  const time = registry.histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames,
    buckets: RECONCILE_TIME_BUCKETS,
  })
  const active = registry.gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames,
  })
  registry
    .gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames,
    })
    .set(c, maxConcurrentReconciles)
  for (const result of RECONCILE_RESULTS) total.inc({ controller, result }, 0)
  for (const m of [errors, terminal, panics, timeouts]) m.inc(c, 0)
  active.set(c, 0)
  const parked = registry.gauge({
    name: 'edgeop_controller_parked_keys',
    help: 'Parked keys per controller and reason',
    labelNames: ['controller', 'reason'],
  })
  for (const reason of PARK_REASONS) parked.set({ controller, reason }, 0)
  const overflow = registry.counter({
    name: 'edgeop_controller_park_overflow_total',
    help: 'Keys not parked as the cap was reached',
    labelNames,
  })
  overflow.inc(c, 0)
  return {
    onReconcile(outcome, seconds) {
      const result = resultLabel(outcome)
      time.observe(c, seconds)
      total.inc({ controller, result })
      if (result !== 'error') return
      errors.inc(c)
      if (outcome === 'terminal_error') terminal.inc(c)
      if (outcome === 'panic') panics.inc(c)
      if (outcome === 'timeout') timeouts.inc(c)
    },
    onActiveWorkers: (n) => active.set(c, n),
    onParkedKeys: (reason, n) => parked.set({ controller, reason }, n),
    onParkOverflow: () => overflow.inc(c),
  }
}
