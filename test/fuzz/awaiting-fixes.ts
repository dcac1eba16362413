/**
 * @module awaiting-fixes — seeds that still crash the code they target, each with the defect of issue 28
 * whose fix makes it pass. The bounded run leaves them out (its seed tests and its mutations) so the
 * suite stays green meanwhile; the long run feeds them and reports them as known.
 *
 * Remove an entry in the change that fixes its defect: the seed then runs as that defect's regression
 * test in `fuzz.test.ts`. Empty lists are the goal.
 */

/** `<target>/<corpus file>` → the defect it reproduces. */
export const AWAITING_FIXES: Readonly<Record<string, string>> = {
  'ops-request/d1-absolute-form-invalid-port.http': 'D1',
  'ops-request/d1-absolute-form-empty-host.http': 'D1',
  'secure-metrics-request/d1-absolute-form-invalid-port.http': 'D1',
  'webhook-request/d1-absolute-form-invalid-port.http': 'D1',
  'admission-review/d2-deep-nesting.json': 'D2',
  'kubeconfig/d7-equal-repeated-key-over-aliases.yaml': 'D7',
  'snapshot-file/d8-null-object.snapshot': 'D8',
  'snapshot-file/d8-object-without-metadata.snapshot': 'D8',
}

/**
 * Seeds of {@link AWAITING_FIXES} that run for minutes until fixed (D7: 3^20 comparisons of equal alias
 * trees); the long run leaves them out as well, as it cannot interrupt a synchronous parse. Once fixed,
 * the seed's test fails by the runner's timeout if the defect comes back.
 */
export const SLOW_UNTIL_FIXED: ReadonlySet<string> = new Set([
  'kubeconfig/d7-equal-repeated-key-over-aliases.yaml',
])

/**
 * What a mutated input that hits a defect awaiting its fix fails with, per target: the bounded run counts
 * such an input (in its diagnostics) instead of failing, as the seed list cannot name inputs the mutations
 * make (the nest edit reaches D2 within 300 inputs). Remove an entry with its defect's fix, and the
 * bounded run checks those inputs again.
 */
export const AWAITING_SIGNATURES: Readonly<Record<string, readonly [defect: string, finding: RegExp]>> = {
  'ops-request': ['D1', /^escaped the request handler .*TypeError: Invalid URL$/],
  'secure-metrics-request': ['D1', /^escaped the request handler .*TypeError: Invalid URL$/],
  'webhook-request': ['D1', /^escaped the request handler .*TypeError: Invalid URL$/],
  'admission-review': ['D2', /^serve\(\S+\) rejected .*RangeError: Maximum call stack size exceeded$/],
  'snapshot-file': [
    'D8',
    /^run\(\) rejected .*TypeError: Cannot read properties of (null|undefined) \(reading '(metadata|resourceVersion)'\)$/,
  ],
}
