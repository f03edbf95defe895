/**
 * The peer pool when the coordinator connection goes: connections still being
 * set up fail at once with MGH_ERR_OFFLINE (their signals have no way through
 * any more), so a load moves on instead of waiting out the connect timeout;
 * open channels stay. A stand-in RTCPeerConnection hands out FakeChannels.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Emitter } from '../src/emitter.js'
import { PeerPool } from '../src/peer-pool.js'
import { FakeChannel } from './fake-channel.js'

/** Makes a data channel already open, or one that never opens, as `channelState` says. */
class FakePeerConnection {
  static channelState = 'open'
  /** @type {FakePeerConnection[]} every one made */
  static made = []
  /** @param {RTCConfiguration} [config] */
  constructor (config) {
    this.config = config
    /** @type {RTCSessionDescriptionInit | null} */
    this.localDescription = null
    /** @type {((e: { channel: FakeChannel }) => void) | null} */
    this.ondatachannel = null
    FakePeerConnection.made.push(this)
  }

  createDataChannel () {
    const channel = new FakeChannel()
    channel.readyState = FakePeerConnection.channelState
    /** the one it made (the offering side) */
    this.channel = channel
    return channel
  }

  async createOffer () { return { type: 'offer', sdp: 'v=0' } }
  async createAnswer () { return { type: 'answer', sdp: 'v=0' } }
  async setRemoteDescription () {}
  /** @param {RTCSessionDescriptionInit} d */
  async setLocalDescription (d) { this.localDescription = d }
  close () {}
}

/**
 * Pages make FakePeerConnections for the rest of the test.
 * @param {import('node:test').TestContext} t
 */
function fakePeers (t) {
  const real = globalThis.RTCPeerConnection
  globalThis.RTCPeerConnection = /** @type {any} */ (FakePeerConnection)
  t.after(() => { globalThis.RTCPeerConnection = real })
}

/** @returns {Promise<unknown>} after what is queued now has run */
const turn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * A route to the coordinator that records what is sent over it and acknowledges nothing.
 * @param {string} name its ICE server is `stun:<name>`
 */
function route (name) {
  /** @type {any[]} */
  const sent = []
  return Object.assign(new Emitter(), {
    sent,
    ice: { iceServers: [{ urls: `stun:${name}` }] },
    request: (/** @type {object} */ m) => { sent.push(m); return new Promise(() => {}) },
    send: (/** @type {object} */ m) => sent.push(m)
  })
}

test('when the coordinator connection goes, connections being set up fail with MGH_ERR_OFFLINE at once; open ones stay', async (t) => {
  fakePeers(t)
  t.mock.timers.enable({ apis: ['setTimeout'] })
  // The coordinator acknowledges nothing: an offer waits for `relayed` until it goes.
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: () => true })
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 5000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })

  await pool.transfer('open-peer')
  FakePeerConnection.channelState = 'connecting'
  const pending = pool.transfer('new-peer')
  /** @type {string | null} */
  let code = null
  pending.catch((err) => { code = err.code })
  const failure = () => code
  await turn()
  assert.equal(failure(), null, 'still connecting')

  signaling.emit('down', null)
  await turn()
  assert.equal(failure(), 'MGH_ERR_OFFLINE', 'failed without any timer running')
  assert.deepEqual(pool.connected(), ['open-peer'])
  assert.equal(pool.links.size, 1)
})

test('an offer is answered only when the coordinator says it introduced its sender', async (t) => {
  fakePeers(t)
  /** @type {object[]} */
  const sent = []
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: (/** @type {object} */ m) => sent.push(m) })
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 5000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })
  const offer = { cid: 'c1', sdp: { type: 'offer', sdp: 'v=0' } }
  signaling.emit('connect', { from: 'stranger', signal: offer })
  signaling.emit('connect', { from: 'stranger', signal: { ...offer, cid: 'c2' }, introduced: 'yes' })
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(pool.links.size, 0, 'no connection set up for an offer the coordinator did not vouch for')
  assert.deepEqual(sent, [])
  signaling.emit('connect', { from: 'asker', signal: offer, introduced: true })
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual([...pool.links.keys()], ['asker c1'])
  assert.deepEqual(sent, [{ type: 'connect', to: 'asker', signal: { cid: 'c1', sdp: { type: 'answer', sdp: 'v=0' } } }])
})

test('drop closes every connection to a peer: a load waiting for it to connect fails at once', async (t) => {
  fakePeers(t)
  FakePeerConnection.channelState = 'connecting'
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: () => true })
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 60_000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })
  const waiting = pool.transfer('liar').then(() => null, (err) => err.code)
  const other = pool.transfer('honest').then(() => null, (err) => err.code)
  await new Promise((resolve) => setImmediate(resolve))
  pool.drop('liar')
  assert.equal(await waiting, 'MGH_ERR_CHANNEL_CLOSED')
  assert.deepEqual([...pool.links.values()].map((l) => l.peer), ['honest'], 'the other peer\'s connection stays')
  pool.drop('honest')
  assert.equal(await other, 'MGH_ERR_CHANNEL_CLOSED')
})

test('messages a WebRTC stack delivers with or before `open` are not lost (node-webrtc dispatches them so)', async (t) => {
  fakePeers(t)
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: () => true })
  const asset = { bytes: new Uint8Array([1, 2, 3]), type: 'image/png' }
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 5000, stallMs: 4000 }, serve: async (hash) => hash === 'h1' ? asset : null, onServed: () => {} })
  signaling.emit('connect', { from: 'asker', signal: { cid: 'c1', sdp: { type: 'offer', sdp: 'v=0' } }, introduced: true })
  assert.equal(pool.links.size, 1, 'the offer was taken')
  const pc = /** @type {FakePeerConnection} */ (FakePeerConnection.made.at(-1))
  // The answering side's channel, and the asker's end of it.
  const [channel, asker] = [new FakeChannel(), new FakeChannel()]
  channel.peer = asker
  asker.peer = channel
  channel.readyState = 'connecting'
  Object.assign(channel, { label: 'maygh' })
  /** @type {unknown[]} */
  const replies = []
  asker.addEventListener('message', (e) => replies.push(/** @type {MessageEvent} */ (e).data))
  pc.ondatachannel?.({ channel })
  // Both in one turn, the message first, as node-webrtc can: nothing has taken the channel yet.
  const message = (/** @type {string} */ data) => Object.assign(new Event('message'), { data })
  channel.dispatchEvent(message(JSON.stringify({ t: 'get', id: 1, hash: 'h1' })))
  channel.readyState = 'open'
  channel.dispatchEvent(new Event('open'))
  channel.dispatchEvent(message(JSON.stringify({ t: 'get', id: 2, hash: 'h2' })))
  for (let i = 0; i < 20 && replies.length < 3; i++) await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(replies.slice(0, 1).map((r) => JSON.parse(String(r))), [{ t: 'ok', id: 1, size: 3, type: 'image/png' }])
  assert.deepEqual([...new Uint8Array(/** @type {ArrayBuffer} */ (replies[1]))], [1, 2, 3])
  assert.deepEqual(JSON.parse(String(replies[2])), { t: 'miss', id: 2 })
})

test('offers made before their peers are known (protocol 3): each handed out is bound to its holder, its ICE candidates go to it before and after, the others are closed', async (t) => {
  fakePeers(t)
  FakePeerConnection.channelState = 'connecting'
  /** @type {any[]} */
  const sent = []
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: (/** @type {object} */ m) => sent.push(m) })
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 60_000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })
  const made = FakePeerConnection.made.length
  const offers = await pool.prepare(3)
  assert.deepEqual(offers.map((o) => o.sdp?.type), ['offer', 'offer', 'offer'])
  const pcs = /** @type {any[]} */ (FakePeerConnection.made.slice(made))
  const candidate = (/** @type {string} */ c) => ({ candidate: { candidate: c, toJSON: () => ({ candidate: c }) } })
  pcs[0].onicecandidate(candidate('early'))
  assert.deepEqual(sent, [], 'a candidate waits until its offer has a peer')
  assert.equal(pool.reaching('holder'), false)
  pool.bind({ holder: offers[0].cid, other: 'not-ours' })
  assert.equal(pool.reaching('holder'), true, 'a transfer to it waits for this channel')
  pcs[0].onicecandidate(candidate('late'))
  assert.deepEqual(sent, [
    { type: 'connect', to: 'holder', signal: { cid: offers[0].cid, candidate: { candidate: 'early' } } },
    { type: 'connect', to: 'holder', signal: { cid: offers[0].cid, candidate: { candidate: 'late' } } }
  ])
  assert.deepEqual([...pool.links.keys()], [`holder ${offers[0].cid}`], 'the offers nobody was handed are closed')
  assert.equal(pool.unbound.size, 0)
  pool.drop()
})

test('the worker\'s route (transparent mode): offers a lookup through it carried, and connections to the holders it named, signal that way; when it goes, only its connections still being set up fail', async (t) => {
  fakePeers(t)
  FakePeerConnection.channelState = 'connecting'
  const own = route('own')
  const relay = route('relay')
  const pool = new PeerPool({ signaling: /** @type {any} */ (own), relay: /** @type {any} */ (relay), config: { connectTimeoutMs: 60_000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })
  const offers = await pool.prepare(2, /** @type {any} */ (relay))
  const pcs = /** @type {any[]} */ (FakePeerConnection.made.slice(-2))
  pool.bind({ holder: offers[0].cid }, /** @type {any} */ (relay))
  pcs[0].onicecandidate({ candidate: { candidate: 'c', toJSON: () => ({ candidate: 'c' }) } })
  assert.deepEqual(relay.sent, [{ type: 'connect', to: 'holder', signal: { cid: offers[0].cid, candidate: { candidate: 'c' } } }], 'its candidates go the lookup\'s way')
  assert.deepEqual(own.sent, [])
  assert.equal(pool.routeOf('holder'), relay)

  // A holder the worker's lookup named, reached later: its offer goes that way too; one it did not, over the page's own socket.
  pool.introduce(['named'], /** @type {any} */ (relay))
  const named = pool.transfer('named')
  const other = pool.transfer('other')
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(relay.sent.slice(1).map((m) => [m.type, m.to, m.signal.sdp?.type]), [['connect', 'named', 'offer']])
  assert.deepEqual(/** @type {any[]} */ (own.sent).map((m) => [m.type, m.to, m.signal.sdp?.type]), [['connect', 'other', 'offer']])
  const stun = (/** @type {FakePeerConnection[]} */ pcs) => pcs.map((pc) => pc.config?.iceServers?.[0]?.urls)
  assert.deepEqual(stun(FakePeerConnection.made.slice(-2)), ['stun:relay', 'stun:own'], 'each with its route\'s ICE servers')
  assert.deepEqual(stun(pcs), ['stun:relay', 'stun:relay'])

  // Signals for its connections come back the worker's way.
  const answered = /** @type {any} */ (pcs[0])
  let remote = null
  answered.setRemoteDescription = async (/** @type {any} */ d) => { remote = d }
  relay.emit('connect', { from: 'holder', signal: { cid: offers[0].cid, sdp: { type: 'answer', sdp: 'v=0' } } })
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(remote, { type: 'answer', sdp: 'v=0' })
  // An offer the worker's way is not answered: its peer serves nothing.
  const links = pool.links.size
  relay.emit('connect', { from: 'stranger', signal: { cid: 'x', sdp: { type: 'offer', sdp: 'v=0' } }, introduced: true })
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(pool.links.size, links)

  /** @type {string[]} */
  const failed = []
  named.catch((err) => failed.push(`named ${err.code}`))
  other.catch((err) => failed.push(`other ${err.code}`))
  relay.emit('down', null)
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(failed, ['named MGH_ERR_OFFLINE'], 'only the worker\'s connections being set up fail')
  assert.equal(pool.routeOf('named'), own, 'a holder it named is reached the page\'s own way from now on')
  pool.drop()
})

test('invitations (a worker looked up for its page before the page\'s script ran): the holder makes the offer, only for a peer introduced to it; the page answers it the worker\'s way, and a request for that holder waits for that connection', async (t) => {
  fakePeers(t)
  FakePeerConnection.channelState = 'connecting'
  const config = { connectTimeoutMs: 60_000, stallMs: 4000 }

  // The holder: invited by the worker's peer, which its lookup introduced.
  const holderSocket = route('holder')
  const holder = new PeerPool({ signaling: /** @type {any} */ (holderSocket), config, serve: async () => null, onServed: () => {} })
  holderSocket.emit('connect', { from: 'stranger', signal: { cid: 'x', invite: true } })
  holderSocket.emit('connect', { from: 'worker', signal: { cid: 'i1', invite: true }, introduced: true })
  await turn()
  assert.deepEqual(holderSocket.sent.map((m) => [m.type, m.to, m.signal.cid, m.signal.sdp?.type]), [['connect', 'worker', 'i1', 'offer']], 'its offer for the cid, to the peer that invited it; none for a stranger')
  assert.deepEqual([...holder.links.keys()], ['worker i1'])

  // The page: told of the invitation, it makes no offer of its own for that holder, and answers the holder's the worker's way.
  const own = route('own')
  const relay = route('relay')
  const pool = new PeerPool({ signaling: /** @type {any} */ (own), relay: /** @type {any} */ (relay), config, serve: async () => null, onServed: () => {} })
  pool.invited({ holder: 'i1' }, /** @type {any} */ (relay))
  assert.equal(pool.reaching('holder'), true)
  assert.equal(pool.reachingSince('holder'), undefined, 'not timed (its pass-over) before the holder\'s offer comes')
  const made = FakePeerConnection.made.length
  const transfer = pool.transfer('holder')
  assert.equal(FakePeerConnection.made.length, made, 'a request for it waits for the invited connection')
  relay.emit('connect', { from: 'holder', signal: { cid: 'i1', sdp: { type: 'offer', sdp: 'v=0' } } })
  assert.equal(typeof pool.reachingSince('holder'), 'number', 'timed from its offer')
  await turn()
  assert.deepEqual(relay.sent.map((m) => [m.type, m.to, m.signal.cid, m.signal.sdp?.type]), [['connect', 'holder', 'i1', 'answer']])
  assert.deepEqual(own.sent, [])
  const pc = /** @type {FakePeerConnection} */ (FakePeerConnection.made.at(-1))
  assert.equal(pc.config?.iceServers?.[0]?.urls, 'stun:relay', 'with the worker\'s ICE servers')
  const channel = Object.assign(new FakeChannel(), { label: 'maygh' })
  pc.ondatachannel?.({ channel })
  assert.equal((await transfer).open, true, 'the request goes over it once open')
  assert.deepEqual(pool.connected(), ['holder'])
  pool.drop()
  holder.drop()
})

test('an invited holder that never makes its offer (a client from before invitations): after half the pass-over the page offers itself, the worker\'s way, and the request waiting for that holder gets that channel, with no fault', async (t) => {
  fakePeers(t)
  t.mock.timers.enable({ apis: ['setTimeout'] })
  FakePeerConnection.channelState = 'connecting'
  const config = { connectTimeoutMs: 5000, stallMs: 4000 }
  const own = route('own')
  const relay = route('relay')
  const pool = new PeerPool({ signaling: /** @type {any} */ (own), relay: /** @type {any} */ (relay), config, serve: async () => null, onServed: () => {} })
  pool.invited({ old: 'i1' }, /** @type {any} */ (relay))
  /** @type {string[]} */
  const outcome = []
  const transfer = pool.transfer('old')
  transfer.then(() => outcome.push('open'), (err) => outcome.push(err.code))
  t.mock.timers.tick(499)
  await turn()
  assert.equal(relay.sent.length, 0, 'nothing offered while the holder\'s offer may still come')
  assert.equal(pool.reachingSince('old'), undefined)
  t.mock.timers.tick(1)
  await turn()
  assert.deepEqual(relay.sent.map((m) => [m.type, m.to, m.signal.sdp?.type]), [['connect', 'old', 'offer']], 'its own offer, the worker\'s way')
  assert.notEqual(relay.sent[0].signal.cid, 'i1', 'for a connection of its own')
  assert.deepEqual(own.sent, [])
  assert.equal(typeof pool.reachingSince('old'), 'number', 'timed from its own offer')
  assert.deepEqual([...pool.links.keys()], [`old ${relay.sent[0].signal.cid}`], 'the invited connection closed')
  assert.deepEqual(outcome, [], 'the request waiting for the holder still waits')
  const channel = /** @type {any} */ (/** @type {FakePeerConnection} */ (FakePeerConnection.made.at(-1)).channel)
  channel.readyState = 'open'
  channel.onopen(new Event('open'))
  await turn()
  assert.deepEqual(outcome, ['open'], 'the request waiting for the holder goes over it, not failed')
  assert.deepEqual(pool.connected(), ['old'])
  pool.drop()
})

test('an invited holder whose offer comes in time: no offer of the page\'s own follows', async (t) => {
  fakePeers(t)
  t.mock.timers.enable({ apis: ['setTimeout'] })
  FakePeerConnection.channelState = 'connecting'
  const relay = route('relay')
  const pool = new PeerPool({ signaling: /** @type {any} */ (route('own')), relay: /** @type {any} */ (relay), config: { connectTimeoutMs: 5000, stallMs: 4000 }, serve: async () => null, onServed: () => {} })
  pool.invited({ holder: 'i1' }, /** @type {any} */ (relay))
  t.mock.timers.tick(400)
  relay.emit('connect', { from: 'holder', signal: { cid: 'i1', sdp: { type: 'offer', sdp: 'v=0' } } })
  await turn()
  t.mock.timers.tick(600)
  await turn()
  assert.deepEqual(relay.sent.map((m) => [m.signal.cid, m.signal.sdp?.type]), [['i1', 'answer']], 'only its answer')
  assert.deepEqual([...pool.links.keys()], ['holder i1'])
  assert.equal(pool.reaching('holder'), true, 'still being set up')
  pool.drop()
})
