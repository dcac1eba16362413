import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { nodePeerCommand, type Peer, PeerProcess } from './peers.ts'

const FIXTURE = fileURLToPath(new URL('./fixtures/flags-peer.ts', import.meta.url))
/** The image flag the benchmark's rows name, and a heap-size flag that leaves V8's flag hash alone. */
const FLAGS = ['--optimize-for-size', '--max-semi-space-size=4']
const WAIT_MS = 30_000

/** A Node peer running the fixture, started as the benchmark starts edgeop and client-node. */
const fixturePeer = (command: Peer['command'] = (job) => nodePeerCommand(FIXTURE, job)): Peer => ({
  id: 'edgeop',
  label: 'flags fixture',
  modes: ['full'],
  queue: false,
  command,
})

test("the '--optimize-for-size' rows ran without the flag: a Node peer's process receives the job's nodeFlags", async () => {
  const p = PeerProcess.start(fixturePeer(), { nodeFlags: FLAGS })
  try {
    const ready = await p.next('ready', WAIT_MS)
    const execArgv = ready.execArgv as string[]
    assert.deepEqual(
      FLAGS.filter((f) => !execArgv.includes(f)),
      [],
      `execArgv ${JSON.stringify(execArgv)}`,
    )
  } finally {
    await p.stop()
  }
})

test('a Node peer whose process did not receive the flags of its row is refused, not measured', async () => {
  // The command line as the benchmark built it before: the flags named by the row but not passed.
  const dropsFlags = fixturePeer((job) => ({
    ...nodePeerCommand(FIXTURE, job),
    args: ['--expose-gc', FIXTURE, JSON.stringify(job)],
  }))
  const p = PeerProcess.start(dropsFlags, { nodeFlags: FLAGS })
  try {
    await assert.rejects(
      p.next('ready', WAIT_MS),
      /refused: started for --optimize-for-size --max-semi-space-size=4, but its process\.execArgv is \["--expose-gc"\]/,
    )
  } finally {
    await p.stop()
  }
})

test('a Node peer that does not say which flags it received is refused', async () => {
  const silent = fixturePeer(() => ({
    file: process.execPath,
    args: ['-e', 'console.log(JSON.stringify({ event: "ready" }))'],
    execArgv: [],
  }))
  const p = PeerProcess.start(silent, {})
  try {
    await assert.rejects(p.next('ready', WAIT_MS), /refused: its first message was "ready", not "hello"/)
  } finally {
    await p.stop()
  }
})

test('a job with Node flags is not started on a peer that is no Node process', () => {
  const native = fixturePeer(() => ({ file: 'true', args: [] }))
  assert.throws(
    () => PeerProcess.start(native, { nodeFlags: ['--optimize-for-size'] }),
    /asks for Node flags --optimize-for-size, but the peer is no Node process/,
  )
})
