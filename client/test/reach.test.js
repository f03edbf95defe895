/**
 * Whether a visitor's channels open at all (reach.js), and how the peer pool
 * tells it: channels we offered that do not open within the pass-over, or
 * fail, count; one that opens, either way, clears the count; links we close
 * ourselves say nothing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Reach } from '../src/reach.js'
import { UNREACHED_AFTER } from '../../policy/hedge-rule.js'
import { Emitter } from '../src/emitter.js'
import { PeerPool } from '../src/peer-pool.js'
import { FakeChannel } from './fake-channel.js'
import { MemoryStorage } from './memory-storage.js'

test('the count of channels that did not open, kept across pages in localStorage; one that opens clears it', () => {
  const storage = new MemoryStorage()
  const page1 = new Reach(/** @type {any} */ (storage))
  for (let i = 0; i < UNREACHED_AFTER - 1; i++) page1.miss()
  assert.equal(page1.unreached(), false)
  // The next page of the same visitor reads it.
  const page2 = new Reach(/** @type {any} */ (storage))
  assert.equal(page2.count(), UNREACHED_AFTER - 1)
  page2.miss()
  assert.equal(page2.unreached(), true)
  page2.opened()
  assert.equal(new Reach(/** @type {any} */ (storage)).count(), 0)
})

test('storage off or throwing: the count lives as long as the page', () => {
  const blocked = { getItem () { throw new Error('SecurityError') }, setItem () { throw new Error('SecurityError') } }
  for (const storage of [undefined, blocked]) {
    const reach = new Reach(/** @type {any} */ (storage))
    for (let i = 0; i < UNREACHED_AFTER; i++) reach.miss()
    assert.equal(reach.unreached(), true)
    reach.opened()
    assert.equal(reach.count(), 0)
  }
})

/** A connection whose channel opens, never opens, or fails, as `state` says when it is made. */
class FakePeerConnection {
  /** @type {'open' | 'connecting' | 'failed'} */
  static state = 'open'
  constructor () {
    this.state = FakePeerConnection.state
    /** @type {(() => void) | null} */
    this.onconnectionstatechange = null
    this.connectionState = 'new'
    /** @type {((e: { channel: FakeChannel }) => void) | null} */
    this.ondatachannel = null
  }

  createDataChannel () {
    const channel = new FakeChannel()
    channel.readyState = this.state === 'open' ? 'open' : 'connecting'
    if (this.state === 'failed') {
      setTimeout(() => {
        this.connectionState = 'failed'
        this.onconnectionstatechange?.()
      }, 10)
    }
    return channel
  }

  async createOffer () { return { type: 'offer', sdp: 'v=0' } }
  async createAnswer () { return { type: 'answer', sdp: 'v=0' } }
  async setRemoteDescription () {}
  async setLocalDescription () {}
  close () {}
}

test('the pool counts a channel we offered that is not open at the pass-over or fails, once; not one we closed; an open one clears the count', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const reach = new Reach(undefined)
  const signaling = Object.assign(new Emitter(), { ice: { iceServers: [] }, request: () => new Promise(() => {}), send: () => true })
  const pool = new PeerPool({ signaling: /** @type {any} */ (signaling), config: { connectTimeoutMs: 5000, stallMs: 4000 }, serve: async () => null, onServed: () => {}, reach, env: { RTCPeerConnection: /** @type {any} */ (FakePeerConnection) } })
  const turn = () => new Promise((resolve) => setImmediate(resolve))

  // Still connecting at the pass-over (a fifth of connectTimeoutMs): one miss, and none more at its timeout.
  FakePeerConnection.state = 'connecting'
  pool.transfer('slow').catch(() => {})
  await turn()
  t.mock.timers.tick(999)
  assert.equal(reach.count(), 0)
  t.mock.timers.tick(1)
  await turn()
  assert.equal(reach.count(), 1)
  t.mock.timers.tick(4000)
  await turn()
  assert.equal(reach.count(), 1, 'its timeout is the same miss')

  // Failed before the pass-over: a miss.
  FakePeerConnection.state = 'failed'
  pool.transfer('failing').catch(() => {})
  await turn()
  t.mock.timers.tick(10)
  await turn()
  assert.equal(reach.count(), 2)

  // Dropped by us (the page went) before the pass-over: nothing.
  FakePeerConnection.state = 'connecting'
  pool.transfer('left').catch(() => {})
  await turn()
  pool.drop('left')
  await turn()
  t.mock.timers.tick(1000)
  await turn()
  assert.equal(reach.count(), 2)

  // One that opens clears it.
  FakePeerConnection.state = 'open'
  await pool.transfer('fine')
  await turn()
  assert.equal(reach.count(), 0)
})
