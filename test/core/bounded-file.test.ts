/**
 * Core's bounded reader: every file edgeop is pointed at is read within a size cap and a time limit,
 * UTF-8 checked, and refused with an error naming the file and the limit.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { formatByteLimit, readBoundedFile, readBoundedText } from '../../src/core/bounded-file.ts'

const dir = mkdtempSync(path.join(tmpdir(), 'edgeop-bounded-file-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function fifo(name: string): string {
  const f = path.join(dir, name)
  execFileSync('mkfifo', [f])
  return f
}

/** How many descriptors of this process are open on `file`. */
function openDescriptors(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file
    } catch {
      return false
    }
  }).length
}

async function refusal(read: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await read.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e as { code: string; message: string },
  )
  return { code: err.code, message: err.message }
}

test('D4: /dev/zero is refused after cap + 1 bytes, naming the file and the limit', async () => {
  assert.deepEqual(await refusal(readBoundedFile('/dev/zero', { what: 'kubeconfig', maxBytes: 8 << 20 })), {
    code: 'EDGEOP_ERR_FILE',
    message: 'kubeconfig /dev/zero is larger than the 8 MiB edgeop reads',
  })
  assert.deepEqual(
    await refusal(
      readBoundedText('/dev/zero', { what: 'token file', maxBytes: 1000, hint: 'is it a token?' }),
    ),
    {
      code: 'EDGEOP_ERR_FILE',
      message: 'token file /dev/zero is larger than the 1000 bytes edgeop reads; is it a token?',
    },
  )
})

test('D4: a file at its cap is read whole; one byte more is refused', async () => {
  const at = path.join(dir, 'at-cap')
  writeFileSync(at, 'x'.repeat(100_000))
  assert.equal((await readBoundedText(at, { what: 'file', maxBytes: 100_000 })).length, 100_000)
  assert.equal(
    (await refusal(readBoundedText(at, { what: 'file', maxBytes: 99_999 }))).message,
    `file ${at} is larger than the 99999 bytes edgeop reads`,
  )
  assert.equal((await readBoundedFile('/dev/null', { what: 'file', maxBytes: 10 })).length, 0)
})

test('D4: a FIFO whose writer never writes is given up after the time limit, naming the file and the limit', async () => {
  const f = fifo('silent')
  // A writer that holds the pipe open and writes nothing (O_RDWR does not wait for a reader).
  const writer = openSync(f, constants.O_RDWR | constants.O_NONBLOCK)
  try {
    assert.deepEqual(
      await refusal(readBoundedText(f, { what: 'kubeconfig', maxBytes: 1024, timeoutMs: 50 })),
      {
        code: 'EDGEOP_ERR_FILE',
        message: `kubeconfig ${f} did not end within 0.05 s (edgeop's limit for reading a file; a pipe or device that never ends?)`,
      },
    )
  } finally {
    closeSync(writer)
  }
  // With no writer at all, the open does not wait and the read ends at once: an empty file.
  assert.equal(await readBoundedText(fifo('no-writer'), { what: 'file', maxBytes: 10, timeoutMs: 50 }), '')
})

test('a pipe that writes and closes is read like a file (process substitution)', async () => {
  const f = fifo('writes')
  const writer = openSync(f, constants.O_RDWR | constants.O_NONBLOCK)
  const read = readBoundedText(f, { what: 'kubeconfig', maxBytes: 1024, timeoutMs: 60_000 })
  // Write once the reader has the pipe open (a second descriptor of it in this process), then close:
  // the reader sees the bytes, then the end.
  while (openDescriptors(f) < 2) await new Promise((r) => setImmediate(r))
  writeFileSync(writer, 'apiVersion: v1\n')
  closeSync(writer)
  assert.equal(await read, 'apiVersion: v1\n')
})

test('bytes that are not UTF-8 are refused at their line and column', async () => {
  const f = path.join(dir, 'latin1')
  writeFileSync(f, Buffer.concat([Buffer.from('line one\nab'), Buffer.from([0xe9]), Buffer.from('\n')]))
  assert.deepEqual(await refusal(readBoundedText(f, { what: 'token file', maxBytes: 1024 })), {
    code: 'EDGEOP_ERR_FILE',
    message: `token file ${f}:2:3: invalid UTF-8 (byte 0xE9); it must be UTF-8 text`,
  })
})

test('a missing file or a directory rejects with the fs error and its code', async () => {
  assert.equal(
    (await refusal(readBoundedFile(path.join(dir, 'none'), { what: 'f', maxBytes: 1 }))).code,
    'ENOENT',
  )
  assert.equal((await refusal(readBoundedFile(dir, { what: 'f', maxBytes: 1 }))).code, 'EISDIR')
})

test('limits read as people write them', () => {
  assert.deepEqual([8 << 20, 1 << 20, 64 << 10, 4096, 1000, 1536 << 10].map(formatByteLimit), [
    '8 MiB',
    '1 MiB',
    '64 KiB',
    '4 KiB',
    '1000 bytes',
    '1536 KiB',
  ])
})
