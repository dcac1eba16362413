/**
 * @module ports — free loopback TCP ports, for the test control plane and any test that needs one.
 *
 * The control plane only ever listens on {@link LOOPBACK}. A free port is found by
 * letting the kernel pick one (binding port 0) and closing the listener again; the
 * short window before the real server binds it is acceptable on a test machine.
 */
import { createServer } from 'node:net'
import { EdgeopError } from '../core/errors.ts'

/** The only address the test control plane listens on or connects to. */
export const LOOPBACK = '127.0.0.1'

/** Returns a TCP port on {@link LOOPBACK} that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, LOOPBACK, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() =>
        port > 0
          ? resolve(port)
          : reject(
              new EdgeopError('EDGEOP_ERR_CONTROL_PLANE', 'could not determine a free port', {
                step: 'free port',
              }),
            ),
      )
    })
  })
}

/** Returns `count` distinct free ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}
