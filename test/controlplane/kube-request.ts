/** @module kube-request — the harness's minimal HTTPS client; one implementation, in `edgeop/testing` (src/testing/kube-request.ts). */
export * from '../../src/testing/kube-request.ts'
