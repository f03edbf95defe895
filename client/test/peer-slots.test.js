/**
 * Who goes next on the peers' channels (peer-slots.js): a few requests per
 * peer at once, the most urgent waiting request first, whichever holder frees
 * a slot first taking it, and nobody left waiting for a peer that was dropped.
 * Requests go to open channels (or start one where there is none), not to a
 * channel still being set up while another of theirs is open, and to one only
 * once their patience is over: a holder whose channel never opens keeps no
 * request waiting.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PeerSlots } from '../src/peer-slots.js'

const how = (/** @type {AbortSignal} */ signal = new AbortController().signal, onBytes = () => {}) => ({ signal, onBytes })
/** What a take gives at once: its peer when a slot was free, else `waits`. @param {Promise<string | null>} taken */
const atOnce = (taken) => Promise.race([taken, Promise.resolve('waits')])

test('each peer carries at most its slots; the preferred free holder is taken first', async () => {
  const slots = new PeerSlots(2)
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'a')
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'a')
  assert.equal(await slots.take(['a', 'b'], 'viewport', how()), 'b', 'a is full: the next holder')
  slots.give('a')
  assert.equal(await atOnce(slots.take(['a', 'b'], 'viewport', how())), 'a', 'one of a\'s two slots given back: a again')
  assert.equal(await atOnce(slots.take(['a', 'b'], 'viewport', how())), 'b', 'and a is full again')
})

test('a freed slot goes to the most urgent request waiting for that peer, then the oldest', async () => {
  const slots = new PeerSlots(1)
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
  const slots = new PeerSlots(1)
  await slots.take(['a'], 'viewport', how())
  await slots.take(['b'], 'viewport', how())
  const waiting = slots.take(['a', 'b'], 'later', how())
  slots.give('b')
  assert.equal(await waiting, 'b')
})

test('a waiting request hears of its holders\' bytes, not of others\', at most once per 10 ms', async () => {
  const slots = new PeerSlots(1)
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
  const slots = new PeerSlots(1)
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
  const slots = new PeerSlots(1)
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

/**
 * Slots over holders whose channels are where `states` says (open, opening, none), changed as the test goes.
 * @param {Record<string, import('../src/peer-slots.js').ChannelState>} states
 */
const over = (states) => new PeerSlots(2, (p) => states[p] ?? 'none')

test('while every holder\'s channel is still being set up, requests wait for the first to open and take its slots; one that never opens gets none', async () => {
  const states = /** @type {Record<string, import('../src/peer-slots.js').ChannelState>} */ ({ liar: 'opening', honest: 'opening' })
  const slots = over(states)
  const first = [1, 2, 3].map(() => slots.take(['liar', 'honest'], 'viewport', { ...how(), patienceMs: 60000 }))
  assert.deepEqual(await Promise.all(first.map(atOnce)), ['waits', 'waits', 'waits'], 'none open yet: they wait')
  states.honest = 'open'
  slots.opened('honest')
  assert.deepEqual(await Promise.all(first.map(atOnce)), ['honest', 'honest', 'waits'], 'its two slots, in order')
  slots.give('honest')
  assert.equal(await atOnce(first[2]), 'honest', 'the slot it frees, not the liar\'s')
  // One with no channel yet takes a request (it starts one); an open one first.
  assert.equal(await atOnce(slots.take(['liar', 'fresh'], 'viewport', { ...how(), patienceMs: 60000 })), 'fresh')
})

test('its patience over, with none of its holders open, a request takes a channel still being set up; never while another of its holders is open', async () => {
  const states = /** @type {Record<string, import('../src/peer-slots.js').ChannelState>} */ ({ slow: 'opening', busy: 'open' })
  const slots = over(states)
  assert.equal(await slots.take(['slow'], 'viewport', { ...how(), patienceMs: 0 }), 'slow', 'no patience: at once')
  const waited = slots.take(['slow'], 'viewport', { ...how(), patienceMs: 30 })
  assert.equal(await atOnce(waited), 'waits')
  assert.equal(await waited, 'slow', 'after its patience')
  // `busy` is open and full: a request that may go to either waits for it, whatever its patience.
  await slots.take(['busy'], 'viewport', how())
  await slots.take(['busy'], 'viewport', how())
  slots.give('slow')
  const either = slots.take(['slow', 'busy'], 'viewport', { ...how(), patienceMs: 0 })
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(await atOnce(either), 'waits', 'not the channel still being set up while busy is open')
  slots.give('busy')
  assert.equal(await either, 'busy')
})
