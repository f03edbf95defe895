/**
 * PeerFetch and a pieced asset's holders (peer-fetch.js `#holdersOf`): one
 * lookup serves the parts a page asks for a while, but one that named nobody
 * is asked again soon, so that a holder that came meanwhile serves the rest
 * of a video instead of the origin. The page's clock is moved on,
 * not waited for; the holder is a real Transfer over a channel pair. And what
 * the worker's lookups found before the page's script ran (`invited`).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { Transfer } from '../src/transfer.js'
import { channelPair } from './fake-channel.js'
import { oneHolder } from './one-holder.js'

const sri = (/** @type {Uint8Array} */ bytes) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`

test('a pieced asset\'s lookup that named nobody is asked again after a second, one that named a holder not for ten', async (t) => {
  const pieces = Array.from({ length: 4 }, () => randomBytes(1000))
  const byHash = new Map(pieces.map((bytes) => [sri(bytes), bytes]))
  const asset = sri(Buffer.concat(pieces))
  const [near, far] = channelPair()
  // The holder: a real Transfer serving the pieces from memory.
  const holder = new Transfer(/** @type {any} */ (far), {
    serve: async (hash) => {
      const bytes = byHash.get(hash)
      return bytes ? { bytes: new Uint8Array(bytes), type: 'video/mp4' } : null
    }
  })
  assert.ok(holder.open)
  const page = new Transfer(/** @type {any} */ (near), { serve: async () => null })
  t.after(() => page.close(new Error('the test is over')))
  /** what each lookup asked for; the first finds nobody (the holder announces a moment later) */
  const lookups = /** @type {string[][]} */ ([])
  const peers = oneHolder(page, async (m) => {
    lookups.push(m.hashes)
    return { type: 'holders', found: Object.fromEntries(m.hashes.map((h) => [h, lookups.length === 1 ? [] : ['holder']])) }
  })
  let later = 0
  const now = performance.now.bind(performance)
  t.mock.method(performance, 'now', () => now() + later)
  const how = () => ({ signal: new AbortController().signal, onBytes () {}, deadline: () => 60000, priority: () => /** @type {const} */ ('later'), originMs: () => null, race () {} })
  const part = (/** @type {number} */ i) => peers.get('/clip.mp4', { hash: sri(pieces[i]), size: pieces[i].length, of: asset }, how())

  assert.equal(await part(0), null, 'nobody named: the origin')
  assert.equal(await part(1), null, 'within a second, the same answer')
  assert.equal(lookups.length, 1)
  later += 1100
  const third = await part(2)
  assert.equal(third?.peer, 'holder', 'asked again: the holder that came')
  assert.deepEqual(third.bytes, new Uint8Array(pieces[2]))
  assert.deepEqual(lookups, [[asset], [asset]], 'the asset is looked up, not its pieces')
  later += 5000
  assert.equal((await part(3))?.peer, 'holder')
  assert.equal(lookups.length, 2, 'a list that named a holder serves its parts for longer')
  later += 6000
  await part(0)
  assert.equal(lookups.length, 3, '…not for ever')
})

test('what the worker\'s lookups found before the page\'s script ran (`invited`) serve the page\'s loads of those assets without a lookup, its invited holders are awaited, and its lookups then carry no offers', async (t) => {
  const [first, second, third] = [randomBytes(1000), randomBytes(500), randomBytes(700)]
  const byHash = new Map([first, second, third].map((bytes) => [sri(bytes), bytes]))
  const [near, far] = channelPair()
  const holder = new Transfer(/** @type {any} */ (far), { serve: async (hash) => byHash.has(hash) ? { bytes: new Uint8Array(/** @type {Buffer} */ (byHash.get(hash))), type: 'image/png' } : null })
  assert.ok(holder.open)
  const page = new Transfer(/** @type {any} */ (near), { serve: async () => null })
  t.after(() => page.close(new Error('the test is over')))
  /** @type {any[]} */
  const lookups = []
  /** @type {any[]} */
  const calls = []
  const relay = { joined: true, id: 'worker', on () {}, send: () => true, request: async () => { throw new Error('not this way: the page\'s own socket has joined') } }
  const peers = oneHolder(page, async (m) => {
    lookups.push(m)
    return { type: 'holders', found: Object.fromEntries(m.hashes.map((h) => [h, ['holder']])) }
  }, {
    relay,
    pool: {
      prepare: async () => [{ cid: 'own', sdp: { type: 'offer', sdp: 'v=0' } }],
      introduce: (/** @type {string[]} */ p) => calls.push(['introduce', p]),
      invited: (/** @type {object} */ offered) => calls.push(['invited', offered])
    }
  })
  const how = () => ({ signal: new AbortController().signal, onBytes () {}, deadline: () => 60000, priority: () => /** @type {const} */ ('viewport'), originMs: () => null, race () {} })
  peers.expect()
  peers.invited({ [sri(first)]: ['holder', 42] }, { holder: 'c1' })
  peers.invited({ [sri(second)]: ['holder'] }, {})
  assert.deepEqual(calls, [['introduce', ['holder']], ['invited', { holder: 'c1' }], ['introduce', ['holder']]], 'their holders reached the worker\'s way, the invited ones awaited')
  assert.equal((await peers.get('/a.png', { hash: sri(first) }, how()))?.peer, 'holder')
  assert.equal((await peers.get('/b.png', { hash: sri(second) }, how()))?.peer, 'holder')
  assert.equal(lookups.length, 0, 'no lookup for what the worker found')
  assert.equal((await peers.get('/c.png', { hash: sri(third) }, how()))?.peer, 'holder')
  assert.deepEqual(lookups.map((m) => [m.hashes, m.offers]), [[[sri(third)], undefined]], 'its own lookup of the rest, without offers')
})
