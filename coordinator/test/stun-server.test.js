import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { startStunServer } from '../src/stun/stun-server.js'
import {
  ATTRIBUTES, MAGIC_COOKIE, decodeMessage, decodeXorAddress, fingerprintOf
} from '../src/stun/stun-message.js'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--allow-loopback-in-peer-connection',
  '--disable-features=WebRtcHideLocalIpsWithMdns'
]

/**
 * A STUN request with the given type, transaction id and raw attributes.
 * @param {{ type?: number, id?: Buffer, attrs?: Array<[number, Buffer]>, cookie?: number }} [o]
 * @returns {Buffer}
 */
function request ({ type = 0x0001, id = randomBytes(12), attrs = [], cookie = MAGIC_COOKIE } = {}) {
  const body = Buffer.concat(attrs.map(([t, v]) => {
    const head = Buffer.alloc(4)
    head.writeUInt16BE(t, 0)
    head.writeUInt16BE(v.length, 2)
    return Buffer.concat([head, v, Buffer.alloc((4 - (v.length % 4)) % 4)])
  }))
  const head = Buffer.alloc(20)
  head.writeUInt16BE(type, 0)
  head.writeUInt16BE(body.length, 2)
  head.writeUInt32BE(cookie, 4)
  id.copy(head, 8)
  return Buffer.concat([head, body])
}

/** How long a test waits for a datagram before it fails. */
const REPLY_TIMEOUT_MS = 2000

/**
 * A bound UDP client that records every datagram it receives.
 *
 * Waiting for a reply is also how the tests know what the server has done:
 * client and server talk over loopback in one process, where datagrams arrive
 * in the order sent and the server answers them in that order, so once the
 * reply to a request is in, the server has handled (and answered, if it
 * answers) everything sent before that request.
 * @param {'udp4' | 'udp6'} type
 * @param {string} host
 */
async function udpClient (type, host) {
  const socket = createSocket(type)
  /** @type {Buffer[]} */
  const received = []
  socket.on('message', (msg) => received.push(msg))
  await new Promise((resolve, reject) => socket.once('error', reject).bind(0, host, () => resolve(undefined)))
  /**
   * @param {(received: Buffer[]) => boolean} done
   * @param {string} what for the timeout's message
   */
  const until = async (done, what) => {
    const signal = AbortSignal.timeout(REPLY_TIMEOUT_MS)
    try {
      while (!done(received)) await once(socket, 'message', { signal })
    } catch (err) {
      throw signal.aborted ? new Error(`timed out waiting for ${what} (${received.length} datagrams in)`) : err
    }
  }
  return {
    socket,
    received,
    /** Resolves when `n` datagrams have arrived in total. @param {number} n */
    waitFor: (n) => until((r) => r.length >= n, `${n} datagrams`),
    /** Resolves when the reply to transaction `id` has arrived. @param {Buffer} id */
    replyTo: (id) => until((r) => r.some((m) => m.subarray(8, 20).equals(id)), 'a reply'),
    send: (buf, port) => new Promise((resolve, reject) => socket.send(buf, port, host, (e) => (e ? reject(e) : resolve(undefined)))),
    close: () => new Promise((resolve) => socket.close(() => resolve(undefined)))
  }
}

/**
 * Decode a response and check its header, transaction id and FINGERPRINT.
 * @param {Buffer} msg
 * @param {Buffer} id
 * @param {number} type
 */
function checkResponse (msg, id, type) {
  const decoded = decodeMessage(msg)
  assert.ok('message' in decoded, `response did not decode: ${JSON.stringify(decoded)}`)
  const { message } = decoded
  assert.equal(message.type, type)
  assert.deepEqual(message.transactionId, id)
  const at = msg.length - 8
  assert.equal(msg.readUInt16BE(at), ATTRIBUTES.FINGERPRINT, 'FINGERPRINT is last')
  assert.equal(msg.readUInt32BE(at + 4), fingerprintOf(msg.subarray(0, at)))
  /** @param {number} t @returns {Buffer} the attribute's value (failing the test when it is absent) */
  const attr = (t) => {
    const value = message.attributes.find((a) => a.type === t)?.value
    assert.ok(value, `attribute 0x${t.toString(16)} missing`)
    return value
  }
  assert.match(attr(ATTRIBUTES.SOFTWARE).toString(), /^maygh-stun/)
  return attr
}

test('answers a Binding request with the client\'s own address (IPv4)', async (t) => {
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  assert.equal(server.url, `stun:127.0.0.1:${server.port}`)
  const client = await udpClient('udp4', '127.0.0.1')
  t.after(() => client.close())
  const ids = [randomBytes(12), randomBytes(12)]
  for (const id of ids) await client.send(request({ id }), server.port)
  await client.waitFor(2)
  for (const [i, id] of ids.entries()) {
    const attr = checkResponse(client.received[i], id, 0x0101)
    const mapped = decodeXorAddress(attr(ATTRIBUTES.XOR_MAPPED_ADDRESS), id)
    assert.deepEqual(mapped, { family: 'IPv4', address: '127.0.0.1', port: client.socket.address().port })
  }
  assert.deepEqual(server.stats(), { requests: 2, responses: 2, malformed: 0 })
})

test('answers over IPv6 with an IPv6 XOR-MAPPED-ADDRESS', async (t) => {
  let server
  try {
    server = await startStunServer({ port: 0, host: '::1' })
  } catch (err) {
    t.skip(`no IPv6 loopback here (${err.code})`)
    return
  }
  t.after(() => server.close())
  assert.equal(server.url, `stun:[::1]:${server.port}`)
  const client = await udpClient('udp6', '::1')
  t.after(() => client.close())
  const id = randomBytes(12)
  await client.send(request({ id }), server.port)
  await client.waitFor(1)
  const attr = checkResponse(client.received[0], id, 0x0101)
  const mapped = decodeXorAddress(attr(ATTRIBUTES.XOR_MAPPED_ADDRESS), id)
  assert.deepEqual(mapped, { family: 'IPv6', address: '::1', port: client.socket.address().port })
})

test('ignores and counts everything that is not a valid Binding request', async (t) => {
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  const client = await udpClient('udp4', '127.0.0.1')
  t.after(() => client.close())
  const good = request()
  const badLength = Buffer.from(good)
  badLength.writeUInt16BE(4, 2)
  const badFingerprint = request({ attrs: [[ATTRIBUTES.FINGERPRINT, Buffer.from([1, 2, 3, 4])]] })
  const overflow = request({ attrs: [[ATTRIBUTES.SOFTWARE, Buffer.from('abcd')]] })
  overflow.writeUInt16BE(200, 22) // attribute claims more bytes than the datagram holds
  const garbage = [
    Buffer.alloc(0),
    Buffer.from('hello, not stun'),
    Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
    good.subarray(0, 19), // short
    request({ cookie: 0xdeadbeef }), // RFC 3489 style / wrong cookie
    request({ type: 0xc001 }), // top bits set
    request({ type: 0x0011 }), // Binding indication
    request({ type: 0x0101 }), // a response, not a request
    request({ type: 0x0003 }), // Allocate (TURN): not served
    badLength,
    Buffer.concat([good, Buffer.alloc(2)]), // length not a multiple of 4
    badFingerprint,
    overflow,
    randomBytes(1500)
  ]
  for (const g of garbage) await client.send(g, server.port)
  const id = randomBytes(12)
  await client.send(request({ id }), server.port)
  // Sent last, so answered last: any reply to the garbage would be in before this one.
  await client.replyTo(id)
  assert.equal(client.received.length, 1, 'only the valid request got a reply')
  checkResponse(client.received[0], id, 0x0101)
  assert.deepEqual(server.stats(), { requests: 1, responses: 1, malformed: garbage.length })
})

test('accepts a request with a valid FINGERPRINT and answers unknown required attributes with 420', async (t) => {
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  const client = await udpClient('udp4', '127.0.0.1')
  t.after(() => client.close())
  // A request carrying its own FINGERPRINT plus an optional unknown attribute: answered normally.
  const id1 = randomBytes(12)
  const withFp = request({ id: id1, attrs: [[0x8055, Buffer.from('x')], [ATTRIBUTES.FINGERPRINT, Buffer.alloc(4)]] })
  withFp.writeUInt32BE(fingerprintOf(withFp.subarray(0, withFp.length - 8)), withFp.length - 4)
  await client.send(withFp, server.port)
  await client.waitFor(1)
  checkResponse(client.received[0], id1, 0x0101)
  // An unknown comprehension-required attribute (0x7777): 420 with UNKNOWN-ATTRIBUTES.
  const id2 = randomBytes(12)
  await client.send(request({ id: id2, attrs: [[0x7777, Buffer.from('zz')]] }), server.port)
  await client.waitFor(2)
  const attr = checkResponse(client.received[1], id2, 0x0111)
  const errorCode = attr(ATTRIBUTES.ERROR_CODE)
  assert.equal(errorCode[2] * 100 + errorCode[3], 420)
  assert.deepEqual(attr(ATTRIBUTES.UNKNOWN_ATTRIBUTES), Buffer.from([0x77, 0x77]))
  assert.deepEqual(server.stats(), { requests: 2, responses: 2, malformed: 0 })
})

test('survives fuzzed datagrams and accounts for every one of them', async (t) => {
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  const client = await udpClient('udp4', '127.0.0.1')
  t.after(() => client.close())
  const seed = request({ attrs: [[ATTRIBUTES.SOFTWARE, Buffer.from('fuzz')], [0x8055, Buffer.from('opt')]] })
  const sent = 600
  let barriers = 0
  for (let i = 0; i < sent; i++) {
    // Half mutate a valid request (flip a few bytes, truncate, extend); half are random bytes.
    let packet
    if (i % 2 === 0) {
      packet = Buffer.from(seed)
      for (let k = 0; k < 1 + (i % 4); k++) packet[(i * 7 + k * 13) % packet.length] ^= 1 << (k + i) % 8
      if (i % 6 === 0) packet = packet.subarray(0, (i * 5) % packet.length)
      if (i % 10 === 0) packet = Buffer.concat([packet, randomBytes(i % 9)])
    } else {
      packet = randomBytes(i % 64)
      if (packet.length >= 8) packet.writeUInt32BE(MAGIC_COOKIE, 4) // get past the cheapest check
    }
    await client.send(packet, server.port)
    // Server and client share this process: pace the sender so that the kernel's
    // receive buffer never overflows (a dropped datagram would be our fault, not the
    // server's). A valid request's reply means the server has read everything before it.
    if (i % 50 === 49) {
      const barrier = randomBytes(12)
      await client.send(request({ id: barrier }), server.port)
      await client.replyTo(barrier)
      barriers++
      assert.equal(server.stats().requests + server.stats().malformed, i + 1 + barriers)
    }
  }
  const id = randomBytes(12)
  await client.send(request({ id }), server.port)
  await client.replyTo(id)
  const stats = server.stats()
  assert.equal(stats.requests + stats.malformed, sent + barriers + 1)
  assert.equal(stats.responses, stats.requests)
  assert.ok(stats.malformed > sent / 2, `${stats.malformed} malformed`)
  assert.equal(client.received.length, stats.responses)
  for (let i = 0; i < 2000; i++) decodeMessage(randomBytes(i % 80)) // never throws
})

test('rejects bad options and a port already in use', async (t) => {
  await assert.rejects(startStunServer({ port: -1 }), TypeError)
  await assert.rejects(startStunServer({ port: 1.5 }), TypeError)
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  await assert.rejects(startStunServer({ port: server.port }), { code: 'EADDRINUSE' })
  await server.close()
  await server.close() // idempotent
})

test('real Chromium gathers a srflx 127.0.0.1 candidate through it', { timeout: 60_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} not found: install chromium (see TEST-ENV.md) to run this test`)
    return
  }
  const { chromium } = await import('playwright-core')
  const server = await startStunServer({ port: 0 })
  t.after(() => server.close())
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.after(() => browser.close())
  const page = await browser.newPage()
  await page.goto('about:blank')
  const candidates = await page.evaluate(async (url) => {
    const pc = new globalThis.RTCPeerConnection({ iceServers: [{ urls: url }] }) // runs in the page
    pc.createDataChannel('probe')
    /** @type {Array<{ type: string | null, address: string | null, port: number | null, protocol: string | null }>} */
    const found = []
    const done = new Promise((resolve) => {
      pc.onicecandidate = (e) => {
        if (e.candidate === null) return resolve(undefined)
        const c = e.candidate
        found.push({ type: c.type, address: c.address, port: c.port, protocol: c.protocol })
      }
      // A bound on the wait for end-of-candidates; the assertions below say what was missing.
      setTimeout(resolve, 15_000)
    })
    await pc.setLocalDescription(await pc.createOffer())
    await done
    pc.close()
    return found
  }, server.url)
  const srflx = candidates.filter((c) => c.type === 'srflx' && c.address === '127.0.0.1')
  assert.ok(srflx.length >= 1, `no srflx 127.0.0.1 candidate in ${JSON.stringify(candidates)}`)
  assert.equal(srflx[0].protocol, 'udp')
  assert.ok(server.stats().requests >= 1)
  assert.ok(server.stats().responses >= 1)
})
