/**
 * @module node/quantity — a Kubernetes memory quantity (`384Mi`, `1G`, `512`) in bytes, for
 * setting a container's memory cgroup from a chart's `resources.limits.memory`.
 */

/** Bytes per unit of each suffix a memory quantity may carry (Kubernetes' resource.Quantity). */
const UNIT_BYTES: Readonly<Record<string, number>> = {
  '': 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
}

/** `quantity` in bytes; throws on anything but an unsigned integer or decimal with one suffix of {@link UNIT_BYTES}. */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|)$/.exec(quantity)
  if (m === null)
    throw new Error(`memory quantity ${JSON.stringify(quantity)} is not <number>[Ki|Mi|Gi|Ti|k|M|G|T]`)
  return Math.ceil(Number(m[1]) * UNIT_BYTES[m[2]!]!)
}
