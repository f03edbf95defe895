// The replay model on tiny hand-written traces whose results are worked out by hand.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FLAG_ASSET, RequestBatch } from '../src/batch.js'
import { IDEALISED, resolveConfig } from '../src/config.js'
import { Engine } from '../src/engine/engine.js'
import { H_SLOT, H_STRIDE, H_TAG } from '../src/engine/holder-index.js'
import { SLOT_STRIDE, TAG } from '../src/engine/online-slots.js'
import { rebaseClock } from '../src/engine/peer-lookup.js'
import { replayRequests, runSimulation } from '../src/run/run.js'
import { SessionWindow } from '../src/input/session-window.js'

/** A deterministic config: the idealised client, no connection failures or set-up time, no plug-in pass. */
const base = { ...IDEALISED, failRate: 0, setupTime: 0, pluginAdoption: 0, linger: 60, sessionGap: 1800 }

/**
 * @param {[number, number, number, number, number?][]} requests [t, client, object, bytes, flags?]
 * @param {object} [options]
 */
function replay (requests, options = {}) {
  return replayRequests(requests, resolveConfig({ ...base, ...options })).maygh
}

/**
 * Replays `requests` through one engine and returns the engine, for tests of its state.
 * @param {[number, number, number, number][]} requests [t, client, object, bytes], all assets
 * @param {object} [options]
 * @param {(engine: Engine) => void} [prepare] called before the first request
 */
function engineAfter (requests, options = {}, prepare = () => {}) {
  const engine = new Engine(resolveConfig({ ...base, ...options }))
  prepare(engine)
  const window = new SessionWindow(engine.config.sessionGap, (b) => engine.processBatch(b))
  const batch = new RequestBatch()
  for (const [t, c, o, bytes] of requests) batch.push(t, c, o, bytes, FLAG_ASSET)
  window.push(batch)
  window.flush()
  return engine
}

/** @param {ReturnType<typeof replay>} r */
function assertBytesAddUp (r) {
  assert.equal(r.originBytes + r.peerBytes + r.cacheBytes, r.bytes)
  assert.equal(r.originRequests + r.peerRequests + r.cacheRequests, r.requests)
  assert.ok(r.oracleSavings >= r.savings - 1e-12, `oracle ${r.oracleSavings} < savings ${r.savings}`)
}

test('a client who comes while the holder lingers gets the object from it', () => {
  // A (0) fetches x from the origin at t=0; B (1) asks at t=30, within A's 60 s linger.
  const r = replay([[0, 0, 7, 1000], [30, 1, 7, 1000]])
  assert.equal(r.peerBytes, 1000)
  assert.equal(r.originBytes, 1000)
  assert.equal(r.savings, 0.5)
  assert.equal(r.oracleSavings, 0.5)
  assert.equal(r.fairness.maxBytes, 1000)
  assertBytesAddUp(r)
})

test('a client who comes after the holder has gone gets the origin', () => {
  // A's last request is at t=0, so it is online until t=60; B asks at t=100.
  const r = replay([[0, 0, 7, 1000], [100, 1, 7, 1000]])
  assert.equal(r.peerBytes, 0)
  assert.equal(r.originBytes, 2000)
  assert.equal(r.savings, 0)
  assert.equal(r.oracleSavings, 0)
  assertBytesAddUp(r)
})

test('a holder whose session goes on stays online between its requests', () => {
  // linger 0; A asks at 0 and again at 1000 (< 1800 s gap: one session); B asks for x at 500.
  const r = replay([[0, 0, 7, 1000], [500, 1, 7, 1000], [1000, 0, 8, 1000]], { linger: 0 })
  assert.equal(r.peerBytes, 1000)
  // with a 600 s session gap, A's session ends at t=0 and B finds nobody
  const r2 = replay([[0, 0, 7, 1000], [500, 1, 7, 1000], [1000, 0, 8, 1000]], { linger: 0, sessionGap: 600 })
  assert.equal(r2.peerBytes, 0)
  assert.equal(r2.savings, 0)
})

test('an upload cap stops a holder serving', () => {
  // A holds x and y (800 B each). Cap: 1000 B in all (rate 0, burst 1000).
  // B gets x from A (A has 200 B left); C asks for y, A cannot send 800 B: origin.
  const r = replay([[0, 0, 1, 800], [1, 0, 2, 800], [10, 1, 1, 800], [20, 2, 2, 800]], { uploadRate: 0, uploadBurst: 1000 })
  assert.equal(r.peerBytes, 800)
  assert.equal(r.originBytes, 2400)
  assert.equal(r.savings, 0.25)
  // the oracle ignores caps: both B's and C's objects had an online holder
  assert.equal(r.oracleSavings, 0.5)
  assertBytesAddUp(r)
  // without the cap C is served too
  const free = replay([[0, 0, 1, 800], [1, 0, 2, 800], [10, 1, 1, 800], [20, 2, 2, 800]])
  assert.equal(free.savings, 0.5)
})

test('a client that asks again for what it holds uses its own store', () => {
  const r = replay([[0, 0, 7, 500], [5000, 0, 7, 500]])
  assert.equal(r.cacheBytes, 500)
  assert.equal(r.cacheRequests, 1)
  assert.equal(r.savings, 0.5)
  assert.equal(r.cacheSavings, 0.5)
  assert.equal(r.peerSavings, 0)
  assertBytesAddUp(r)
})

test('requests for non-assets go to the origin and are not stored', () => {
  // flags 0: e.g. a 404, a POST, a URL outside --assets
  const r = replay([[0, 0, 7, 1000, 0], [10, 1, 7, 1000]])
  assert.equal(r.originBytes, 2000)
  assert.equal(r.assetRequests, 1)
  assert.equal(r.oracleSavings, 0)
})

test('failed connections send the client to the origin; the oracle ignores failures', () => {
  const r = replay([[0, 0, 7, 1000], [30, 1, 7, 1000]], { failRate: 1 })
  assert.equal(r.peerBytes, 0)
  assert.equal(r.connections.attempts, 1)
  assert.equal(r.connections.failures, 1)
  assert.equal(r.oracleSavings, 0.5)
  assertBytesAddUp(r)
})

test('a holder that would leave during connection set-up is not used', () => {
  // A online until t=60; B asks at t=58 and a connection takes 5 s.
  const late = replay([[0, 0, 7, 1000], [58, 1, 7, 1000]], { setupTime: 5 })
  assert.equal(late.peerBytes, 0)
  const early = replay([[0, 0, 7, 1000], [50, 1, 7, 1000]], { setupTime: 5 })
  assert.equal(early.peerBytes, 1000)
})

test('the set-up check is exact at fractions of a second', () => {
  // A asks at t=0.5 and stays until 60.5; a connection takes 5 s, so asking at 55.4 is in
  // time and at 55.6 is not (the engine's whole-second shortcut must not round this away).
  for (const [at, served] of [[55.4, 1000], [55.6, 0]]) {
    const r = replay([[0.5, 0, 7, 1000], [at, 1, 7, 1000]], { setupTime: 5 })
    assert.equal(r.peerBytes, served, `asking at ${at}`)
  }
})

/**
 * When a lookup of `o` last marked client `c`'s entry (its current session's), or null when
 * `c` is offline or does not list `o`.
 * @param {Engine} engine @param {number} c @param {number} o @returns {number | null}
 */
function chosenOf (engine, c, o) {
  const s = engine.slotOf[c]
  if (s === -1) return null
  const lists = engine.holders.lists
  const data = lists.data(o)
  for (let pos = 0; pos < lists.length(o); pos++) {
    const at = lists.base(o) + pos * H_STRIDE
    if (data[at + H_SLOT] === s && data[at + H_TAG] === engine.slots.state[s * SLOT_STRIDE + TAG]) return engine.holders.chosen(o, pos)
  }
  return null
}

test('the coordinator clock moves back before it overflows, keeping the order of choices', () => {
  const engine = new Engine(resolveConfig(base))
  engine.holders.ensureObjects(8)
  // four entries of one object (a block) and one of another (inline)
  const entries = [[5, 0, 0], [5, 1, 5], [5, 2, 0x40000000 + 7], [5, 3, 0x7ffffff0], [6, 0, 0x50000000]]
  for (const [o, c, t] of entries) {
    const s = engine.slots.open(c, 0)
    engine.holders.add(o, s, engine.slots.state[s * SLOT_STRIDE + TAG])
    engine.holders.setChosen(o, engine.holders.count(o) - 1, t)
  }
  engine.clock = 0x7fffffff
  rebaseClock(engine)
  assert.equal(engine.clock, 0x3fffffff)
  const after = [0, 1, 2, 3].map((pos) => engine.holders.chosen(5, pos))
  // never chosen and chosen long ago both read as never; the order of the rest holds
  assert.deepEqual(after, [0, 0, 7, 0x3ffffff0])
  assert.equal(engine.holders.chosen(6, 0), 0x10000000)
})

test('recency is per asset: a peer chosen for one asset ranks as never chosen for another', () => {
  // Q (3) gets x, R (4) gets y, from the origin; Q gets y from R (R's y entry: 1); A (0) gets x
  // from Q (Q's x entry: 2); B (1) asks for y, held by R (1) and Q (0 for y): Q, as the
  // coordinator's per-asset entries rank it (by a per-peer time, 2 against 1, it would be R).
  const e = engineAfter([[0, 3, 1, 100], [1, 4, 2, 100], [2, 3, 2, 100], [3, 0, 1, 100], [4, 1, 2, 100]])
  assert.equal(e.peerRequests, 3)
  assert.deepEqual([chosenOf(e, 4, 2), chosenOf(e, 3, 1), chosenOf(e, 3, 2)], [1, 2, 3])
})

test('a client that comes back lists its holdings as new entries: never chosen, as the coordinator stores them', () => {
  // Q (3) holds x all along. P (0) gets x from Q (Q's entry chosen), B (1) gets x from P (P's
  // entry chosen), P leaves at t=20 and comes back at t=100 (linger 0, 60 s session gap).
  const requests = /** @type {[number, number, number, number][]} */ ([
    [0, 3, 1, 100], [50, 3, 9, 100], [100, 3, 9, 100], [150, 3, 9, 100],
    [1, 0, 1, 100], [10, 1, 1, 100], [20, 0, 2, 100], [100, 0, 3, 100], [150, 0, 4, 100]
  ].sort((a, b) => a[0] - b[0]))
  const before = engineAfter(requests.filter(([t]) => t < 100), { linger: 0, sessionGap: 60 })
  assert.equal(before.slotOf[0], -1, 'P has left')
  const after = engineAfter(requests.filter(([t]) => t <= 100), { linger: 0, sessionGap: 60 })
  assert.deepEqual([chosenOf(after, 0, 1), chosenOf(after, 0, 2)], [0, 0], 'P\'s holdings are new entries')
  assert.equal(chosenOf(after, 3, 1), 1, 'Q, still online, keeps its time for x')
  assert.equal(after.peerRequests, 2)
})

test('session tags are renumbered before they overflow; live records keep working, stale ones go', async () => {
  // Renumbering many times must not change what is online where: the oracle and own-store
  // figures do not depend on the order of holder lists, so they match a run without it.
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 40_000, days: 1, seed: 4 } }
  const plain = await runSimulation(source, resolveConfig({ pluginAdoption: 0 }))
  let renumbered = 0
  const engine = new Engine(resolveConfig({ pluginAdoption: 0 }))
  const renumber = engine.slots.renumber.bind(engine.slots)
  engine.slots.renumber = (...lists) => { renumbered++; renumber(...lists) }
  engine.slots.tagLimit = engine.slots.capacity + 300
  const { EtsyGenerator } = await import('../src/synthetic/synthetic-etsy.js')
  const window = new SessionWindow(engine.config.sessionGap, (b) => engine.processBatch(b))
  for (const b of new EtsyGenerator({ requests: 40_000, days: 1, seed: 4 }).batches()) window.push(b)
  window.flush()
  const r = engine.finish()
  assert.ok(renumbered > 3, `renumbered ${renumbered} times`)
  assert.equal(r.requests, plain.maygh.requests)
  assert.equal(r.oracleBytes, plain.maygh.oracleBytes)
  assert.equal(r.cacheBytes, plain.maygh.cacheBytes)
  assertBytesAddUp(r)
  // every record left in the index is live or stale by its tag, no live tag exceeds the last,
  // and every entry's time is one the clock gave
  const lists = engine.holders.lists
  let marked = 0
  for (let o = 0; o < engine.objectsSeen; o++) {
    for (let i = 0; i < lists.length(o); i++) {
      const tag = lists.data(o)[lists.base(o) + i * H_STRIDE + H_TAG]
      assert.ok(tag > 0 && tag <= engine.slots.lastTag)
      const chosen = engine.holders.chosen(o, i)
      assert.ok(chosen >= 0 && chosen <= engine.clock)
      if (chosen > 0) marked++
    }
  }
  assert.ok(marked > 10, `${marked} marked entries left`)
  // channel records name page ids the counter has given since the last renumbering, never older ones
  const channels = engine.channels.lists
  let records = 0
  for (let s = 0; s < engine.slots.capacity; s++) {
    for (let i = 0; i < channels.length(s); i++) {
      const page = channels.pool[channels.base(s) + i * channels.stride + 1]
      assert.ok(page > 0 && page <= engine.slots.lastTag, `page id ${page} after ${engine.slots.lastTag}`)
      records++
    }
  }
  assert.ok(records > 0, 'some channels were open at the end')
})

test('nobody serves when nobody adopts', () => {
  const r = replay([[0, 0, 7, 1000], [30, 1, 7, 1000], [40, 1, 7, 1000]], { adoption: 0 })
  assert.equal(r.savings, 0)
  assert.equal(r.adopters, 0)
  assert.equal(r.originBytes, 3000)
})

test('the store evicts the least recently used object to stay under its quota', () => {
  // quota 1000: A fetches x then y (600 B each), so x is evicted. B then finds y at A, not x.
  const r = replay([[0, 0, 1, 600], [1, 0, 2, 600], [10, 1, 1, 600], [20, 2, 2, 600]], { quotaBytes: 1000 })
  assert.equal(r.store.evictions, 1 + 0) // B's store holds only x
  assert.equal(r.peerBytes, 600)
  assert.equal(r.peerRequests, 1)
  // a touch makes x the most recent: fetch x, y, touch x... but x was evicted: asking again is the origin
  const touched = replay([[0, 0, 1, 400], [1, 0, 2, 400], [2, 0, 1, 400], [3, 0, 3, 400], [10, 1, 1, 400], [11, 2, 2, 400]], { quotaBytes: 1000 })
  // store of A after t=3: x (touched at 2), z; y was least recently used and evicted
  assert.equal(touched.cacheRequests, 1)
  assert.equal(touched.peerRequests, 1) // B gets x from A; C finds no holder of y
  assertBytesAddUp(touched)
})

test('an object larger than the quota is fetched but not stored', () => {
  const r = replay([[0, 0, 7, 5000], [10, 1, 7, 5000]], { quotaBytes: 4000 })
  assert.equal(r.store.tooBig, 2)
  assert.equal(r.peerBytes, 0)
})

test('the policy prefers a peer the asker already has a channel to', () => {
  // A (0) and D (3) come to hold y, D first, so D was chosen less recently than A
  // will be. B (1) fetches x from A, then asks for y: A (connected) beats D.
  const r = replay([
    [0, 0, 1, 100], // A: x from the origin
    [0, 3, 2, 100], // D: y from the origin
    [1, 0, 2, 100], // A: y from D (new connection; D chosen at t=1)
    [10, 1, 1, 100], // B: x from A (new connection; A chosen at t=10)
    [11, 1, 2, 100] // B: y; A is connected, D least recently chosen
  ])
  assert.equal(r.peerRequests, 3)
  assert.equal(r.connections.attempts, 2) // A→D and B→A; B→D never tried
  assert.equal(r.connections.reused, 1)
  assert.equal(r.fairness.maxBytes, 200) // A served x and y to B
})

test('least recently chosen holders take turns', () => {
  // No linger and a 60 s session gap. A holds x from t=0 and leaves; D fetches x at t=100
  // from the origin; A comes back at t=110, so both hold x and stay until t=125/126.
  // B and C ask with maxHolders 1 (B is gone by C's turn): each gets a different holder.
  const r = replay([
    [0, 0, 1, 100], [100, 3, 1, 100], [110, 0, 8, 100], [120, 1, 1, 100], [121, 2, 1, 100], [125, 0, 9, 100], [126, 3, 9, 100]
  ], { maxHolders: 1, sessionGap: 60, linger: 0 })
  assert.equal(r.peerRequests, 2) // B and C; A has left by D's last request
  assert.equal(r.fairness.uploaders, 2)
  assert.equal(r.fairness.maxBytes, 100) // A and D served one x each
  assert.equal(r.fairness.participants, 4)
})

test('times that go backwards are clamped and counted', () => {
  const run = replayRequests([[10, 0, 1, 100], [5, 1, 1, 100]], resolveConfig(base))
  assert.equal(run.reordered, 1)
  assert.equal(run.maygh.peerBytes, 100)
})

test('a synthetic week: bytes add up, the oracle bounds savings, the plug-in saves less', async () => {
  const config = resolveConfig({ seed: 3 })
  const run = await runSimulation({ synthetic: 'etsy', generator: { requests: 60_000, days: 2, seed: 3 } }, config)
  const r = run.maygh
  assertBytesAddUp(r)
  // a small crowd (60,000 requests in two days) under the real client's behaviours saves little
  assert.ok(r.savings > 0.02 && r.savings < 1, `savings ${r.savings}`)
  assert.ok(run.plugin !== null)
  assert.ok(run.plugin.savings < r.savings)
  assert.ok(run.plugin.adopters < r.adopters * 0.2 && run.plugin.adopters > r.adopters * 0.05)
  assert.equal(r.hourly.hours, 48)
  assert.equal(r.hourly.requests.reduce((a, b) => a + b, 0), r.requests)
  assert.equal(Math.round(r.hourly.originBytes.reduce((a, b) => a + b, 0)), r.originBytes)
  // every asset request asks the coordinator except own-store hits and first page views (no media here)
  assert.equal(r.coordinator.lookups, r.assetRequests - r.cacheRequests - r.firstPage.requests)
  assert.equal(r.media.requests, 0)
  assert.ok(r.firstPage.requests > 0 && r.coordinator.joins === r.pageViews)
  assert.ok(r.fairness.gini >= 0 && r.fairness.gini <= 1)
  assert.ok(r.coordinator.lookupsPerSecond.peak >= r.coordinator.lookupsPerSecond.mean)
  // same seed, same numbers
  const again = await runSimulation({ synthetic: 'etsy', generator: { requests: 60_000, days: 2, seed: 3 } }, config)
  assert.equal(again.maygh.peerBytes, r.peerBytes)
  assert.equal(again.maygh.oracleBytes, r.oracleBytes)
})

test('more linger never lowers the oracle bound', async () => {
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 30_000, days: 1, seed: 5 } }
  let last = -1
  for (const linger of [0, 60, 600]) {
    const { maygh } = await runSimulation(source, resolveConfig({ linger, pluginAdoption: 0 }))
    assert.ok(maygh.oracleSavings >= last, `linger ${linger}: ${maygh.oracleSavings} < ${last}`)
    last = maygh.oracleSavings
  }
})
