import assert from 'node:assert/strict'
import { test } from 'node:test'
import { countTcpStates, tcpTableRows } from './tcp-table.ts'

// Three lines as the kernel prints them: a listener on 6443 (0x192B), a client connection to it in
// CLOSE-WAIT (state 08) and one established (01), and an unrelated connection to port 80 (0x0050).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:192B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:A1B2 0100007F:192B 08 00000000:00000001 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1
   2: 0100007F:A1B3 0100007F:192B 01 00000000:00000000 02:00000A3C 00000000     0        0 3 2 0 20 4 30 10 -1
   3: 0100007F:A1B4 0100007F:0050 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0 20 4 30 10 -1
`

test('countTcpStates counts only client connections to the port, by state', () => {
  assert.deepEqual(countTcpStates(TCP, 6443), { 'CLOSE-WAIT': 1, ESTABLISHED: 1 })
  assert.deepEqual(countTcpStates(TCP, 80), { ESTABLISHED: 1 })
  assert.deepEqual(countTcpStates(TCP, 1), {})
})

test('tcpTableRows reads the ports, state and inode of every row, the listener included', () => {
  assert.deepEqual(tcpTableRows(TCP)[0], { localPort: 6443, remotePort: 0, state: 10, inode: '1' })
  assert.equal(tcpTableRows(TCP).length, 4)
})
