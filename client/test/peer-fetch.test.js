/**
 * PeerFetch and a pieced asset's holders (peer-fetch.js `#holdersOf`): one
 * lookup serves the parts a page asks for a while, but one that named nobody
 * is asked again soon, so that a holder that came meanwhile serves the rest
 * of a video instead of the origin. The page's clock is moved on,
 * not waited for; the holder is a real Transfer over a channel pair.
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
