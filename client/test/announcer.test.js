/**
 * The announcer's batching delay runs on node:test's mock timers, so each test
 * moves time itself (and can check that nothing goes out before the delay);
 * replies arrive when the test calls `answer()`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Announcer } from '../src/announcer.js'

/** A stand-in for Signaling that records requests and answers like the coordinator, when told to. */
function fakeSignaling (limits = {}) {
  /** @type {any[]} */
  const sent = []
  /** @type {(() => void)[]} */
  const unanswered = []
  let holding = 0
  return {
    sent,
    joined: true,
    limits: { maxMessageBytes: 65536, maxAssetsPerPeer: 100, maxAssetsPerMessage: 10, ...limits },
    /** @param {any} msg */
    request (msg) {
      sent.push(msg)
      // `serving: false` unlists everything (coordinator/src/handlers/update.js)
      holding = msg.serving === false ? 0 : holding + msg.add.length - msg.remove.length
      const n = holding
      return new Promise((resolve) => unanswered.push(() => resolve({ type: 'updated', holding: n })))
    },
    /** Deliver the replies to every request sent so far. */
    answer () {
      for (const reply of unanswered.splice(0)) reply()
    }
  }
}

const h = (/** @type {number} */ i) => `sha256-${String(i).padStart(43, 'A')}=`

test('a burst of changes goes out as one update after the delay', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling()
  /** @type {string[]} */
  let held = []
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => true, delayMs: 20 })
  a.welcomed([])
  for (let i = 0; i < 5; i++) {
    held = [...held, h(i)]
    a.schedule()
  }
  assert.equal(a.synced(), false)
  const settled = a.settled()
  t.mock.timers.tick(19)
  assert.equal(signaling.sent.length, 0, 'nothing before the delay')
  t.mock.timers.tick(1)
  assert.equal(signaling.sent.length, 1)
  assert.deepEqual(signaling.sent[0], { type: 'update', add: held, remove: [] })
  assert.equal(a.synced(), false, 'not in step until the coordinator answers')
  signaling.answer()
  await settled
  assert.equal(a.held, 5)
  assert.equal(a.synced(), true)
})

test('sends the difference from what was announced, split to the per-message limit', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling({ maxAssetsPerMessage: 4 })
  let held = [h(1), h(2), h(3)]
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => true, delayMs: 1 })
  a.welcomed(held)
  held = [h(2), ...Array.from({ length: 9 }, (_, i) => h(10 + i))]
  a.schedule()
  const settled = a.settled()
  t.mock.timers.tick(1)
  signaling.answer()
  await settled
  const adds = signaling.sent.flatMap((m) => m.add)
  const removes = signaling.sent.flatMap((m) => m.remove)
  assert.deepEqual(removes.sort(), [h(1), h(3)].sort())
  assert.equal(adds.length, 9)
  assert.ok(signaling.sent.every((m) => m.add.length <= 4 && m.remove.length <= 4))
  assert.equal(signaling.sent.length, 3)
})

test('never announces more than the coordinator lists per peer', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling({ maxAssetsPerPeer: 5 })
  const held = Array.from({ length: 8 }, (_, i) => h(i))
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => true, delayMs: 1 })
  a.welcomed(held.slice(0, 2))
  a.schedule()
  const settled = a.settled()
  t.mock.timers.tick(1)
  signaling.answer()
  await settled
  // Two listed by the join, three more up to the cap: one update, nothing else.
  assert.deepEqual(signaling.sent.map((m) => m.add), [held.slice(2, 5)], 'most recently used first')
  assert.deepEqual(signaling.sent.map((m) => m.remove), [[]])
  assert.equal(a.synced(), true, 'in step at the cap, with three held left unannounced')
})

test('while not joined nothing is sent and nothing is waited for; join resets the announced set', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling()
  signaling.joined = false
  const held = [h(1)]
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => true, delayMs: 1 })
  a.schedule()
  await a.settled()
  assert.equal(signaling.sent.length, 0)
  signaling.joined = true
  a.welcomed(held)
  const settled = a.settled()
  t.mock.timers.tick(1)
  await settled
  assert.equal(signaling.sent.length, 0, 'the join already carried the holdings')
  assert.equal(a.held, 1)
})

test('a visitor that stops serving unlists everything in one update, and announces again when it serves again', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling({ maxAssetsPerMessage: 4 })
  let held = Array.from({ length: 6 }, (_, i) => h(i))
  let serving = true
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => serving, delayMs: 1 })
  a.welcomed(held.slice(0, 4))
  serving = false
  held = [...held, h(6)] // stored meanwhile: not announced either
  a.flush()
  assert.deepEqual(signaling.sent, [{ type: 'update', serving: false }], 'at once, one message, no list')
  assert.equal(a.synced(), false)
  signaling.answer()
  await a.settled()
  assert.equal(a.held, 0)
  a.schedule()
  t.mock.timers.tick(1)
  assert.equal(signaling.sent.length, 1, 'nothing more while not serving')

  serving = true
  assert.equal(a.synced(), false, 'serving again: not in step until announced')
  const settled = a.settled()
  t.mock.timers.tick(1)
  signaling.answer()
  await settled
  const again = signaling.sent.slice(1)
  assert.deepEqual(again.map((m) => m.serving), [true, undefined], 'the first update after says serving again')
  assert.deepEqual(again.flatMap((m) => m.add), held)
  assert.equal(a.held, 7)
})

test('a visitor that joins while not serving (so with nothing) sends nothing until it serves', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const signaling = fakeSignaling()
  let serving = false
  const held = [h(1), h(2)]
  const a = new Announcer({ signaling: /** @type {any} */ (signaling), holdings: () => held, serving: () => serving, delayMs: 1 })
  a.welcomed([])
  t.mock.timers.tick(1)
  await a.settled()
  assert.equal(signaling.sent.length, 0)
  serving = true
  const settled = a.settled()
  t.mock.timers.tick(1)
  signaling.answer()
  await settled
  assert.deepEqual(signaling.sent, [{ type: 'update', add: held, remove: [], serving: true }])
})
