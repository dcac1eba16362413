/** @module observability — how a process is seen from outside: the metrics registry and runtime metrics, health checks, the ops server, the structured logger. */
export * from './health-checks.ts'
export * from './heap-after-gc.ts'
export * from './logger.ts'
export * from './metrics-registry.ts'
export * from './ops-server.ts'
export * from './runtime-metrics.ts'
