/**
 * @module awaiting-fixes — seeds that still crash the code they target, each with the defect of the hostile-input review
 * whose fix makes it pass. The bounded run leaves them out (its seed tests and its mutations) so the
 * suite stays green meanwhile; the long run feeds them and reports them as known.
 *
 * Remove an entry in the change that fixes its defect: the seed then runs as that defect's regression
 * test in `fuzz.test.ts`. Empty lists are the goal.
 */

/** `<target>/<corpus file>` → the defect it reproduces. */
export const AWAITING_FIXES: Readonly<Record<string, string>> = {}

/**
 * Seeds of {@link AWAITING_FIXES} that run for minutes until fixed (D7: 3^20 comparisons of equal alias
 * trees); the long run leaves them out as well, as it cannot interrupt a synchronous parse. Once fixed,
 * the seed's test fails by the runner's timeout if the defect comes back.
 */
export const SLOW_UNTIL_FIXED: ReadonlySet<string> = new Set()

/**
 * What a mutated input that hits a defect awaiting its fix fails with, per target: the bounded run counts
 * such an input (in its diagnostics) instead of failing, as the seed list cannot name inputs the mutations
 * make (the nest edit reaches D2 within 300 inputs). Remove an entry with its defect's fix, and the
 * bounded run checks those inputs again.
 */
export const AWAITING_SIGNATURES: Readonly<Record<string, readonly [defect: string, finding: RegExp]>> = {}
