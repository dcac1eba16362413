/** @module ports — free loopback TCP ports; one implementation, in `edgeop/testing` (src/testing/ports.ts). */
export * from '../../src/testing/ports.ts'
