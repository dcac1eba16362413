import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ipAddressOctets } from '../../src/tls/ip-address-octets.ts'

const hex = (a: string): string | undefined => ipAddressOctets(a)?.toString('hex')

test('D16: IPv4 is 4 octets, IPv6 16 in every text form; zones and names are not addresses', () => {
  assert.equal(hex('10.1.2.3'), '0a010203')
  assert.equal(hex('::1'), '00000000000000000000000000000001')
  assert.equal(hex('::'), '00000000000000000000000000000000')
  assert.equal(hex('1::'), '00010000000000000000000000000000')
  assert.equal(hex('2001:db8:85a3::8a2e:370:7334'), '20010db885a3000000008a2e03707334')
  assert.equal(hex('2001:DB8:85A3:0:0:8A2E:370:7334'), '20010db885a3000000008a2e03707334')
  assert.equal(hex('::ffff:10.1.2.3'), '00000000000000000000ffff0a010203')
  assert.equal(hex('64:ff9b::192.0.2.33'), '0064ff9b0000000000000000c0000221')
  for (const a of ['fe80::1%eth0', 'localhost', '1.2.3', '::1::', '[::1]']) assert.equal(hex(a), undefined, a)
})
