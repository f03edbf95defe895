/**
 * Who goes next on the peers' channels (peer-slots.js): a few requests per
 * peer at once and no more than a window of bytes owed, the candidate that
 * owes least, the most urgent waiting request first, whichever holder is
 * nearly done first taking it, and nobody left waiting for a peer that was
 * dropped.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PeerSlots } from '../src/peer-slots.js'

const how = (/** @type {AbortSignal} */ signal = new AbortController().signal, onBytes = () => {}) => ({ signal, onBytes })
/** What a take gives at once: its peer when a slot was free, else `waits`. @param {Promise<string | null>} taken */
const atOnce = (taken) => Promise.race([taken, Promise.resolve('waits')])

test('each peer carries at most its slots; the preferred free holder is taken first', async () => {
  const slots = new PeerSlots({ perPeer: 2 })
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'a')
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'a')
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'b', 'a is full: the next holder')
  slots.give('a')
  assert.equal(await atOnce(slots.take(['a', 'b'], 'viewport', how())), 'a', 'one of a\'s two slots given back: a again')
  assert.equal(await atOnce(slots.take(['a', 'b'], 'viewport', how())), 'b', 'and a is full again')
})

test('a freed slot goes to the most urgent request waiting for that peer, then the oldest', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['a'], 'viewport', how())
  /** @type {string[]} */
  const order = []
  const wait = (/** @type {string} */ label, /** @type {any} */ priority) => slots.take(['a'], priority, how()).then((p) => { order.push(label); return p })
  const later1 = wait('later1', 'later')
  const viewport = wait('viewport', 'viewport')
  const later2 = wait('later2', 'later')
  const blocking = wait('blocking', 'blocking')
  for (const p of [blocking, viewport, later1, later2]) {
    slots.give('a')
    assert.equal(await p, 'a')
  }
  assert.deepEqual(order, ['blocking', 'viewport', 'later1', 'later2'])
})

test('work goes to whichever holder frees a slot first', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['a'], 'viewport', how())
  await slots.take(['b'], 'viewport', how())
  const waiting = slots.take(['a', 'b'], 'later', how())
  slots.give('b')
  assert.equal(await waiting, 'b')
})

test('a waiting request hears of its holders\' bytes, not of others\', at most once per 10 ms', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['a'], 'viewport', how())
  await slots.take(['b'], 'viewport', how())
  let heard = 0
  slots.take(['a'], 'later', how(undefined, () => heard++))
  slots.busy('b')
  assert.equal(heard, 0)
  slots.busy('a')
  assert.equal(heard, 1)
  slots.busy('a') // the next frame, at once
  assert.equal(heard, 1)
  await new Promise((resolve) => setTimeout(resolve, 15))
  slots.busy('a')
  assert.equal(heard, 2)
})

test('an aborted wait gives null and leaves the queue; a dropped peer leaves nobody waiting on it alone', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['a'], 'viewport', how())
  await slots.take(['b'], 'viewport', how())
  const stop = new AbortController()
  const aborted = slots.take(['a'], 'viewport', how(stop.signal))
  stop.abort()
  assert.equal(await aborted, null)
  slots.give('a')
  assert.equal(await atOnce(slots.take(['a'], 'viewport', how())), 'a', 'the freed slot did not go to the aborted request')
  const onlyA = slots.take(['a'], 'viewport', how())
  const aOrB = slots.take(['a', 'b'], 'viewport', how())
  slots.drop('a')
  assert.equal(await onlyA, null)
  slots.give('a')
  assert.equal(await atOnce(aOrB), 'waits', 'the other still waits, not for a')
  slots.give('b')
  assert.equal(await aOrB, 'b', 'for b')
  assert.equal(await slots.take([], 'viewport', how()), null, 'no candidate: nothing to wait for')
})

test('a peer gone quiet is avoided by the requests that have another holder, not by those that have none', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['quiet'], 'viewport', how())
  await slots.take(['b'], 'viewport', how())
  const either = slots.take(['quiet', 'b'], 'viewport', how())
  const onlyQuiet = slots.take(['quiet'], 'viewport', how())
  slots.avoid('quiet')
  slots.give('quiet')
  assert.equal(await onlyQuiet, 'quiet', 'the freed slot went to the one with no other holder')
  slots.give('b')
  assert.equal(await either, 'b')
})

test('a freed slot is offered first to a request held up elsewhere (spare), then to those waiting', async () => {
  /** @type {string[]} */
  const offered = []
  let takes = true
  const slots = new PeerSlots({ perPeer: 1, spare: (peer) => { offered.push(peer); return takes ? 0 : null } })
  await slots.take(['a'], 'viewport', how())
  const waiting = slots.take(['a'], 'viewport', how())
  slots.give('a')
  assert.equal(await atOnce(waiting), 'waits', 'the held-up request took it: the count stays')
  takes = false
  slots.give('a')
  assert.equal(await waiting, 'a', 'then the waiting one')
  assert.deepEqual(offered, ['a', 'a'])
})

test('a channel owing a window of bytes takes no more until they come: the next request goes as its reply nears its end', async () => {
  const slots = new PeerSlots({ perPeer: 3, window: () => 100 })
  assert.equal(await slots.take(['a'], 'viewport', { ...how(), bytes: 250 }), 'a', 'an idle channel takes any request')
  const next = slots.take(['a'], 'viewport', { ...how(), bytes: 40 })
  assert.equal(await atOnce(next), 'waits', 'a owes 250 bytes: the next waits')
  slots.sent('a', 100)
  assert.equal(await atOnce(next), 'waits', 'still 150 owed')
  slots.sent('a', 60)
  assert.equal(await next, 'a', '90 owed: under the window, the next is asked for while the last ends')
  assert.equal(await atOnce(slots.take(['a'], 'viewport', how(new AbortController().signal))), 'waits', 'a owes 90 + 40 now: over the window again')
})

test('a request goes to the candidate that owes least among the best ranked, ahead of the preferred order', async () => {
  const rank = new Map([['quiet', 1]])
  const slots = new PeerSlots({ perPeer: 3, window: () => 1000, rank: (p) => rank.get(p) ?? 0 })
  assert.equal(await slots.take(['a', 'b', 'c'], 'viewport', { ...how(), bytes: 300 }), 'a')
  assert.equal(await slots.take(['a', 'b', 'c'], 'viewport', { ...how(), bytes: 50 }), 'b', 'a owes 300: b, which owes nothing')
  assert.equal(await slots.take(['a', 'b', 'c'], 'viewport', { ...how(), bytes: 20 }), 'c')
  assert.equal(await slots.take(['a', 'b', 'c'], 'viewport', { ...how(), bytes: 40 }), 'c', 'c owes 20, b 50')
  assert.equal(await slots.take(['quiet', 'a', 'b'], 'viewport', { ...how(), bytes: 40 }), 'b', 'a quiet holder owing nothing comes after those ranked better')
  slots.give('a', 300)
  assert.equal(await slots.take(['b', 'a'], 'viewport', { ...how(), bytes: 40 }), 'a', 'a\'s request ended, its bytes not come: it owes nothing again')
})

test('the window is read as it is needed: a channel that carries more in a round trip is sent more ahead', async () => {
  let window = 100
  const slots = new PeerSlots({ perPeer: 3, window: () => window })
  await slots.take(['a'], 'viewport', { ...how(), bytes: 250 })
  assert.equal(await atOnce(slots.take(['a'], 'viewport', { ...how(new AbortController().signal), bytes: 40 })), 'waits', '250 owed, over a 100-byte window')
  window = 1000
  assert.equal(await atOnce(slots.take(['a'], 'viewport', { ...how(), bytes: 40 })), 'a', 'under a window of 1000')
})

test('while a request the page needs now is on its way, those below the fold take no slot on a channel that carries none such, even a free one, and hear of every peer\'s bytes', async () => {
  const slots = new PeerSlots({ perPeer: 3 })
  /** @type {import('../../policy/hedge-rule.js').Priority} */
  let where = 'later'
  const end = slots.begin(() => where)
  assert.equal(await atOnce(slots.take(['b'], 'later', how())), 'b', 'nothing pressing yet: its image is not known to be in view')
  where = 'viewport'
  assert.equal(await slots.take(['a'], () => where, how()), 'a')
  let heard = 0
  const later = slots.take(['b'], 'later', how(undefined, () => heard++))
  assert.equal(await atOnce(later), 'waits', 'b is free and busy, but with a request below the fold, while one in the viewport is on its way')
  slots.busy('a')
  assert.equal(heard, 1, 'held back, it hears of a\'s bytes: the page\'s peers are busy')
  slots.give('a')
  assert.equal(await atOnce(later), 'waits', 'its slot given back, the request is still on its way (verified, say)')
  end()
  assert.equal(await later, 'b', 'released as it ends')
  end() // once only
  assert.equal(await atOnce(slots.take(['b'], 'later', how())), 'b')
})

test('while a request the page needs now is on its way, one below the fold queues behind it on its channel (in order, it delays none of them), as its window allows, and no further once it has come', async () => {
  const slots = new PeerSlots({ perPeer: 3, window: () => 100 })
  const urgent = () => /** @type {const} */ ('viewport')
  const end = slots.begin(urgent)
  assert.equal(await slots.take(['a'], urgent, { ...how(), bytes: 250 }), 'a')
  const later = slots.take(['b', 'a'], 'later', { ...how(), bytes: 40 })
  assert.equal(await atOnce(later), 'waits', 'b is idle and a owes 250 bytes')
  slots.sent('a', 200)
  assert.equal(await later, 'a', 'a\'s reply nears its end: the next one follows it on a, and b stays idle')
  slots.give('a', 0, urgent)
  assert.equal(await atOnce(slots.take(['a'], 'later', { ...how(new AbortController().signal), bytes: 10 })), 'waits', 'a carries only the one below the fold now: no more behind it while the viewport\'s are on their way')
  end()
})

test('a waiting request goes as it comes to be needed now: its priority is read when a slot frees', async () => {
  const slots = new PeerSlots({ perPeer: 1 })
  await slots.take(['a'], 'viewport', how())
  /** @type {import('../../policy/hedge-rule.js').Priority} */
  let placed = 'later'
  /** @type {string[]} */
  const order = []
  const first = slots.take(['a'], 'viewport', how()).then(() => order.push('viewport'))
  const second = slots.take(['a'], () => placed, how()).then(() => order.push('placed'))
  slots.give('a')
  await first
  placed = 'blocking'
  const third = slots.take(['a'], 'viewport', how()).then(() => order.push('third'))
  slots.give('a')
  await second
  slots.give('a')
  await third
  assert.deepEqual(order, ['viewport', 'placed', 'third'], 'placed in view meanwhile, it went ahead of a later viewport request')
})
