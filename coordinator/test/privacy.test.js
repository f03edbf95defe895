/**
 * Privacy mode (peers reach each other only through the site's TURN relay)
 * and the bound on holders one client may learn (issue 24, item 5). The same
 * mode with real browsers and a real coturn: test/e2e/privacy-relay.test.js.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { Ice, turnServer } from '../src/ice.js'
import { resolveConfig } from '../src/config.js'
import { startCoordinator } from '../src/server.js'
import { TestClient } from '../../test/support/test-client.js'
import { h } from './store-contract.js'

const SECRET = 'a-turn-secret-of-some-length'
const TURN = { turnUrls: ['turn:127.0.0.1:3478?transport=udp'], turnSecret: SECRET }
const HOST = 'candidate:1 1 udp 2122260223 192.168.1.20 54321 typ host generation 0'
const SRFLX = 'candidate:2 1 udp 1686052607 203.0.113.9 40000 typ srflx raddr 192.168.1.20 rport 54321 generation 0'
const RELAY = 'candidate:3 1 udp 41885439 198.51.100.7 50010 typ relay raddr 203.0.113.9 rport 40000 generation 0'

test('a welcome carries TURN credentials minted for the peer (coturn\'s REST API: expiry:peer and its HMAC-SHA1), and the relay policy in privacy mode', () => {
  const ice = new Ice({ ...resolveConfig({ ...TURN, iceTransportPolicy: 'relay' }) }, 'stun:127.0.0.1:3478')
  const { iceServers, iceTransportPolicy } = ice.welcome('s~peer', 1_000_000)
  assert.equal(iceTransportPolicy, 'relay')
  assert.deepEqual(iceServers[0], { urls: 'stun:127.0.0.1:3478' })
  const turn = /** @type {{ urls: string[], username: string, credential: string }} */ (iceServers[1])
  assert.deepEqual(turn.urls, TURN.turnUrls)
  assert.equal(turn.username, `${1000 + 86400}:s~peer`)
  assert.equal(turn.credential, createHmac('sha1', SECRET).update(turn.username).digest('base64'))
  assert.deepEqual(turnServer(['turn:x'], SECRET, 'p', 5), { urls: ['turn:x'], username: '5:p', credential: createHmac('sha1', SECRET).update('5:p').digest('base64') })
  // Outside privacy mode: no policy, and signals pass untouched.
  const open = new Ice(resolveConfig({}), 'stun:127.0.0.1:3478')
  assert.deepEqual(open.welcome('s~peer'), { iceServers: [{ urls: 'stun:127.0.0.1:3478' }] })
  const signal = { cid: 'c', candidate: { candidate: HOST, sdpMid: '0' } }
  assert.equal(open.pass(signal), signal)
})

test('in privacy mode a signal is held to relay candidates: others refused or cut, base addresses blanked', () => {
  const ice = new Ice(resolveConfig({ ...TURN, iceTransportPolicy: 'relay' }), '')
  for (const candidate of [HOST, SRFLX, 'candidate:4 1 udp 1 10.0.0.1 9 typ prflx raddr 10.0.0.2 rport 9', 'not a candidate']) {
    assert.throws(() => ice.pass({ cid: 'c', candidate: { candidate, sdpMid: '0' } }), { code: 'MGH_ERR_RELAY_ONLY' })
  }
  assert.deepEqual(ice.pass({ cid: 'c', candidate: { candidate: RELAY, sdpMid: '0', sdpMLineIndex: 0 } }), {
    cid: 'c', candidate: { candidate: RELAY.replace('raddr 203.0.113.9 rport 40000', 'raddr 0.0.0.0 rport 0'), sdpMid: '0', sdpMLineIndex: 0 }
  })
  // The end of candidates passes.
  assert.deepEqual(ice.pass({ cid: 'c', candidate: { candidate: '', sdpMid: '0' } }), { cid: 'c', candidate: { candidate: '', sdpMid: '0' } })
  const sdp = ['v=0', 'o=- 1 2 IN IP4 127.0.0.1', 'm=application 54321 UDP/DTLS/SCTP webrtc-datachannel', 'c=IN IP4 192.168.1.20',
    'a=rtcp:9 IN IP4 192.168.1.20', `a=${HOST}`, `a=${SRFLX}`, `a=${RELAY}`, 'a=mid:0', ''].join('\r\n')
  const passed = ice.pass({ cid: 'c', sdp: { type: 'offer', sdp } }).sdp
  assert.equal(passed.type, 'offer')
  assert.equal(passed.sdp, ['v=0', 'o=- 1 2 IN IP4 127.0.0.1', 'm=application 54321 UDP/DTLS/SCTP webrtc-datachannel', 'c=IN IP4 0.0.0.0',
    'a=rtcp:9 IN IP4 0.0.0.0', `a=${RELAY.replace('raddr 203.0.113.9 rport 40000', 'raddr 0.0.0.0 rport 0')}`, 'a=mid:0', ''].join('\r\n'))
  assert.doesNotMatch(passed.sdp, /192\.168|203\.0\.113/)
})

test('privacy mode is configured whole: a TURN server is required, turnUrls and turnSecret go together', () => {
  assert.throws(() => resolveConfig({ iceTransportPolicy: 'relay' }), /needs a TURN server/)
  assert.throws(() => resolveConfig({ iceTransportPolicy: /** @type {any} */ ('none') }), /all or relay/)
  assert.throws(() => resolveConfig({ turnUrls: ['turn:x:3478'] }), /go together/)
  assert.throws(() => resolveConfig({ turnUrls: ['stun:x:3478'], turnSecret: SECRET }), /turn: or turns:/)
  assert.throws(() => resolveConfig({ ...TURN, turnSecret: 'short' }), /at least 16/)
  assert.equal(resolveConfig({ iceTransportPolicy: 'relay', iceServers: [{ urls: 'turn:t:3478', username: 'u', credential: 'c' }] }).iceTransportPolicy, 'relay')
})

test('a coordinator in privacy mode: clients of protocol 4 are told to relay, older ones refused; a host candidate is not passed on, a relay one is, blanked', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, ...TURN, iceTransportPolicy: 'relay' })
  try {
    const old = await TestClient.open(coordinator.url)
    old.sendRaw(JSON.stringify({ v: 3, type: 'join', have: [], ref: 1 }))
    const refused = await old.next()
    assert.equal(refused.code, 'MGH_ERR_BAD_VERSION')
    assert.match(refused.message, /TURN relay only: protocol 4/)
    const a = await TestClient.open(coordinator.url)
    const b = await TestClient.open(coordinator.url)
    const welcome = await a.join([h('p')])
    assert.equal(welcome.iceTransportPolicy, 'relay')
    assert.equal(welcome.iceServers.at(-1).username.split(':')[1], welcome.id)
    const { id: idB } = await b.join()
    assert.deepEqual((await b.request({ type: 'lookup', hash: h('p') })).peers, [welcome.id])
    const host = await b.request({ type: 'connect', to: welcome.id, signal: { cid: 'k', candidate: { candidate: HOST, sdpMid: '0' } } })
    assert.equal(host.code, 'MGH_ERR_RELAY_ONLY')
    assert.equal((await b.request({ type: 'connect', to: welcome.id, signal: { cid: 'k', candidate: { candidate: RELAY, sdpMid: '0' } } })).type, 'relayed')
    const got = await a.next()
    assert.equal(got.from, idB)
    assert.match(got.signal.candidate.candidate, /typ relay raddr 0\.0\.0\.0 rport 0/)
    await Promise.all([old.close(), a.close(), b.close()])
  } finally {
    await coordinator.close()
  }
})

test('a client is handed at most newHolderBurst holders it did not know, refilled at newHoldersPerSecond and carried to its next socket; the holders it knows it is handed still', async () => {
  let now = 0
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, newHolderBurst: 5, newHoldersPerSecond: 1 }, { now: () => now })
  try {
    const holders = await Promise.all(Array.from({ length: 8 }, () => TestClient.open(coordinator.url)))
    const ids = []
    for (const [i, c] of holders.entries()) ids.push((await c.join([h(`n${i}`)])).id)
    const harvester = await TestClient.open(coordinator.url)
    await harvester.join()
    const found = []
    for (let i = 0; i < 8; i++) found.push((await harvester.request({ type: 'lookup', hash: h(`n${i}`) })).peers)
    assert.deepEqual(found, [...ids.slice(0, 5).map((id) => [id]), [], [], []], 'five new holders, then none')
    assert.deepEqual((await harvester.request({ type: 'lookup', hash: h('n0') })).peers, [ids[0]], 'a holder it knows is named still')
    // Reconnecting does not start it afresh (client-limits.js).
    await harvester.close()
    await new Promise((resolve) => setTimeout(resolve, 50))
    const again = await TestClient.open(coordinator.url)
    await again.join()
    assert.deepEqual((await again.request({ type: 'lookup', hash: h('n6') })).peers, [])
    now += 2000
    assert.deepEqual((await again.request({ type: 'lookup', hash: h('n6') })).peers, [ids[6]], 'refilled: one a second')
    assert.deepEqual((await again.request({ type: 'lookup', hash: h('n7') })).peers, [ids[7]])
    assert.deepEqual((await again.request({ type: 'lookup', hash: h('n5') })).peers, [])
    await Promise.all([...holders, again].map((c) => c.close()))
  } finally {
    await coordinator.close()
  }
})
