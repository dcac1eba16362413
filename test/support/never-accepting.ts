/**
 * @module never-accepting — a TCP port whose connections never complete, for connect-timeout tests.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'

/**
 * A TCP listener that never accepts: a child process listens with a backlog of 1 and then
 * blocks its event loop, so the kernel queues two connections and drops later SYNs. Call `stop()`
 * (kills the child) when done.
 */
export async function neverAcceptingListener(): Promise<{ port: number; stop(): void }> {
  const script = `
    const s = require('node:net').createServer()
    s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      process.stdout.write(s.address().port + '\\n')
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000)
      process.exit(0)
    })`
  const child: ChildProcess = spawn(process.execPath, ['-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const stop = (): void => void child.kill('SIGKILL')
  const [line] = (await once(child.stdout!, 'data')) as [Buffer]
  const port = Number(line.toString().trim())
  // Fill the accept queue (backlog + 1 connections); the next SYN gets no answer.
  for (let i = 0; i < 2; i++) {
    const filler: Socket = connect(port, '127.0.0.1').on('error', () => {}) // reset when the child dies
    await once(filler, 'connect')
  }
  return { port, stop }
}
