// The real client's behaviours (issue 22), each switched on alone over the idealised model, on
// tiny hand-written traces whose results are worked out by hand.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_MEDIA, FLAG_PAGE, RequestBatch } from '../src/batch.js'
import { HEDGE_DEFAULTS } from '../../policy/hedge-rule.js'
import { passOverS, replayPriority, requestDeadline } from '../src/client-timing.js'
import { IDEALISED, resolveConfig } from '../src/config.js'
import { Engine } from '../src/engine/engine.js'
import { ReferenceModel } from '../src/reference/reference-model.js'
import { hasTrait } from '../src/rng.js'
import { SessionWindow } from '../src/input/session-window.js'

/** The idealised client without random failures or set-up time, no plug-in pass: each test switches one behaviour on. */
const ideal = { ...IDEALISED, failRate: 0, setupTime: 0, pluginAdoption: 0, linger: 60, sessionGap: 1800 }
const A = FLAG_ASSET
const P = FLAG_PAGE
/** the object id of page requests in these traces */
const PAGE = 99

/**
 * Replays [t, client, object, bytes, flags] requests through an engine and the reference model
 * (as the CLI does: through the session window), requires them to agree, and returns the
 * engine (for its per-client state) and its result.
 * @param {[number, number, number, number, number][]} requests
 * @param {object} [options]
 */
function engineRun (requests, options = {}) {
  const config = resolveConfig({ ...ideal, ...options })
  const engine = new Engine(config)
  const model = new ReferenceModel(config)
  const window = new SessionWindow(config.sessionGap, (b) => { engine.processBatch(b); model.processBatch(b) })
  const batch = new RequestBatch()
  for (const [t, c, o, bytes, flags] of requests) batch.push(t, c, o, bytes, flags)
  window.push(batch)
  window.flush()
  const result = engine.finish()
  assert.deepEqual(model.finish(), result)
  return { engine, result }
}

/**
 * The first client ids (from 0) that have, or lack, traits at fraction 0.5 and seed 1.
 * @param {number} n
 * @param {{ untraversable?: boolean, receiveOnly?: boolean }} want
 * @param {number[]} [not] ids to skip
 * @returns {number[]}
 */
function clientsWith (n, want, not = []) {
  const out = []
  for (let c = 0; out.length < n; c++) {
    if (not.includes(c)) continue
    const u = hasTrait(c, 'untraversable', 0.5, 1)
    const r = hasTrait(c, 'receiveOnly', 0.5, 1)
    if ((want.untraversable ?? false) === u && (want.receiveOnly ?? false) === r) out.push(c)
  }
  return out
}
const TRAITS = { untraversable: 0.5, receiveOnly: 0.5, seed: 1 }

/** @param {import('../src/engine/engine-result.js').EngineResult} r */
function assertBytesAddUp (r) {
  assert.equal(r.originBytes + r.peerBytes + r.cacheBytes, r.bytes)
  assert.ok(r.oracleSavings >= r.savings - 1e-12)
}

test('the client\'s clocks come from its own code: the hedge rule\'s deadlines and the pass-over', () => {
  const origin = { originTtfb: 0.16, originRate: 625_000 }
  // latency: 2 × TTFB within hedgeMinMs 100 … hedgeMaxMs 1500, whatever the request
  assert.equal(requestDeadline({ hedge: 'latency', ...origin }, 100_000, 'later'), 0.32)
  assert.equal(requestDeadline({ hedge: 'latency', originTtfb: 0.01, originRate: 625_000 }, 1000, 'viewport'), 0.1)
  assert.equal(requestDeadline({ hedge: 'latency', originTtfb: 5, originRate: 625_000 }, 1000, 'viewport'), 1.5)
  // balanced: blocking races; a viewport image adds its download time; below the fold waits up to the cap
  assert.equal(requestDeadline({ hedge: 'balanced', ...origin }, 100_000, 'blocking'), 0.32)
  assert.equal(requestDeadline({ hedge: 'balanced', ...origin }, 100_000, 'viewport'), 0.48)
  assert.equal(requestDeadline({ hedge: 'balanced', ...origin }, 100_000, 'later'), 1.5)
  assert.equal(requestDeadline({ hedge: 'savings', ...origin }, 100_000, 'blocking'), Infinity)
  // a failed connection is passed over at a fifth of connectTimeoutMs, or at 4 × the page's channels' set-up time if sooner
  assert.equal(passOverS(1), 1)
  assert.equal(passOverS(0.1), 0.4)
  assert.equal(passOverS(0.01), 0.15, 'never sooner than the floor')
  // a page view's styles, scripts and fonts block; of the rest its first few are in the viewport
  assert.equal(replayPriority(A | FLAG_BLOCKING, 9, 6), 'blocking')
  assert.equal(replayPriority(A, 5, 6), 'viewport')
  assert.equal(replayPriority(A, 6, 6), 'later')
})

test('the hedge rule replayed: a viewport image races the origin, one below the fold waits for its channel; savings first waits for every one, latency first for none', () => {
  // A holds x and y; B's page asks for both at once over a new channel (first byte at 1.05 s):
  // x is in the viewport (deadline 0.32 + 1000 / 625,000 s: the origin is done at 0.48 s),
  // y below it (viewportAssets 1: deadline 1.5 s, so the peer wins); a script races like x.
  // (engineRun checks the reference model agrees under each preference.)
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 1000, A], [0, 0, 2, 1000, A], [0, 0, 3, 1000, A | FLAG_BLOCKING],
    [10, 1, PAGE, 0, P], [10, 1, 1, 1000, A], [10, 1, 2, 1000, A], [10, 1, 3, 1000, A | FLAG_BLOCKING]
  ])
  const run = (/** @type {string} */ hedge) => engineRun(requests, { hedge, setupTime: 1, viewportAssets: 1 }).result
  const balanced = run('balanced')
  assert.equal(balanced.peerBytes, 1000, 'only y from the peer')
  assert.equal(balanced.hedge.racesLost, 2)
  assert.equal(run('latency').peerBytes, 0)
  assert.equal(run('savings').peerBytes, 3000)
  assert.equal(run('savings').hedge.racesLost, 0)
})

test('the hedge rule replayed: a script races as under latency, a later asset waits hedgeMaxMs; a page view counts its store\'s answers too', () => {
  // A holds y (an image) and s (a script), 700 kB each; B's second page view answers six assets
  // from its store, then asks for one of them over a new channel: the peer's first byte at
  // 0.55 + 1 = 1.55 s (a slow lookup), after every deadline but savings'. The origin, asked at the
  // deadline D, is done at D + 0.16 + 1.12 s; the peer wins only at a rate that sends the 700 kB
  // before that: the rate at which the race turns tells D.
  const store = [10, 11, 12, 13, 14, 15]
  const trace = (/** @type {number} */ asset, /** @type {number} */ flags) => /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 700_000, A], [0, 0, 2, 700_000, A | FLAG_BLOCKING],
    [5, 1, PAGE, 0, P], ...store.map((o) => /** @type {[number, number, number, number, number]} */ ([5, 1, o, 1000, A])),
    [50, 0, PAGE, 0, P], // A stays online
    [100, 1, PAGE, 0, P], ...store.map((o) => /** @type {[number, number, number, number, number]} */ ([100, 1, o, 1000, A])), [100, 1, asset, 700_000, flags]
  ])
  const options = { setupTime: 1, lookupTime: 0.55 }
  /** @returns {number} races lost: 1 when the origin served, 0 when the peer did */
  const race = (/** @type {object} */ more, /** @type {number} */ asset, /** @type {number} */ flags) => {
    const r = engineRun(trace(asset, flags), { ...options, ...more }).result
    assert.equal(r.cacheRequests, 6)
    return r.hedge.racesLost
  }
  /**
   * Asserts the race turns at deadline D: the peer loses at 0.95× the rate that would tie with the
   * origin asked at D, and wins at 1.05× it.
   * @param {number} deadline seconds @param {object} more @param {number} asset @param {number} flags
   */
  const turnsAt = (deadline, more, asset, flags) => {
    const tie = 700_000 / (deadline + 0.16 + 1.12 - 1.55)
    assert.equal(race({ ...more, peerRate: 0.95 * tie }, asset, flags), 1, `D = ${deadline}: the slower peer loses`)
    assert.equal(race({ ...more, peerRate: 1.05 * tie }, asset, flags), 0, `D = ${deadline}: the faster peer wins`)
  }
  const R = 2 * 0.16
  // the script: R under balanced as under latency
  turnsAt(R, { hedge: 'balanced' }, 2, A | FLAG_BLOCKING)
  turnsAt(R, { hedge: 'latency' }, 2, A | FLAG_BLOCKING)
  // the image, the page view's 7th asset (its 6 store answers count): below the fold, hedgeMaxMs
  turnsAt(HEDGE_DEFAULTS.hedgeMaxMs / 1000, { hedge: 'balanced' }, 1, A)
  // … in the viewport when 7 are: R + its download time from the origin; under latency, R
  turnsAt(R + 1.12, { hedge: 'balanced', viewportAssets: 7 }, 1, A)
  turnsAt(R, { hedge: 'latency' }, 1, A)
  // savings: no deadline, the peer serves however slow
  assert.equal(race({ hedge: 'savings', peerRate: 1000 }, 1, A), 0)
})

test('a visitor\'s first page view ever comes from the origin, is stored and announced; later ones use peers', () => {
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 1000, A], // A's first view: x from the origin, then adopted
    [10, 1, PAGE, 0, P], [10, 1, 2, 1000, A], // B's first view: y from the origin
    [40, 1, PAGE, 0, P], [40, 1, 1, 1000, A], // B's second view: x from A, who announced it
    [5000, 0, PAGE, 0, P], [5000, 0, 1, 1000, A], [5000, 0, 3, 1000, A] // A's next session: not a first view
  ])
  const { result: r } = engineRun(requests, { firstPage: 'origin' })
  assert.deepEqual(r.firstPage, { requests: 2, bytes: 2000 })
  assert.equal(r.peerBytes, 1000)
  assert.equal(r.cacheRequests, 1, 'A kept what its first view loaded')
  assert.equal(r.coordinator.lookups, 2, "B's x and A's z: first views ask nobody")
  assert.equal(r.pageViews, 4)
  assertBytesAddUp(r)
  // marked-element mode (the idealised model): every request asks, nothing differs but that
  const { result: peers } = engineRun(requests, { firstPage: 'peers' })
  assert.deepEqual(peers.firstPage, { requests: 0, bytes: 0 })
  assert.equal(peers.coordinator.lookups, 4)
  assert.equal(peers.peerBytes, 1000)
})

test('audio and video come from the origin and are never stored, but stay in the totals', () => {
  const M = FLAG_ASSET | FLAG_MEDIA
  const requests = /** @type {[number, number, number, number, number][]} */ ([[0, 0, 5, 5000, M], [10, 1, 5, 5000, M], [20, 0, 5, 5000, M], [20, 0, 6, 100, A]])
  const { result: r } = engineRun(requests, { media: 'origin' })
  assert.deepEqual(r.media, { requests: 3, bytes: 15000 })
  assert.equal(r.originBytes, 15100)
  assert.equal(r.bytes, 15100)
  assert.equal(r.cacheRequests, 0)
  assert.equal(r.coordinator.lookups, 1)
  assert.equal(r.store.entries, 1, 'only the image is stored')
  const { result: peers } = engineRun(requests, { media: 'peers' })
  assert.equal(peers.peerBytes, 5000)
  assert.equal(peers.cacheBytes, 5000)
})

test('with page-lifetime channels every page view joins anew and opens its own channels', () => {
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 100, A], [0, 0, 2, 100, A], [0, 0, 3, 100, A], // A holds x, y, z
    [10, 1, PAGE, 0, P], [10, 1, 1, 100, A], [11, 1, 2, 100, A], // B: x over a new channel, y over it again
    [20, 1, PAGE, 0, P], [20, 1, 3, 100, A] // B's next page: its channels closed with the last one
  ])
  const { result: page } = engineRun(requests, { channels: 'page' })
  assert.equal(page.peerRequests, 3)
  assert.deepEqual([page.connections.attempts, page.connections.reused], [2, 1])
  assert.equal(page.coordinator.joins, 3, "A's page and B's two")
  assert.equal(page.coordinator.joinHoldings, 2, "B's second join lists the x and y it holds")
  const { result: session } = engineRun(requests, { channels: 'session' })
  assert.deepEqual([session.connections.attempts, session.connections.reused], [1, 2])
  assert.equal(session.coordinator.joins, 2)
  assert.equal(session.coordinator.joinHoldings, 0)
  // the holder's new page view closes the channels others opened to its last page
  const holderMoves = /** @type {[number, number, number, number, number][]} */ ([
    ...requests.slice(0, 7), [12, 0, PAGE, 0, P], [13, 1, 3, 100, A]
  ])
  const { result: moved } = engineRun(holderMoves, { channels: 'page' })
  assert.deepEqual([moved.connections.attempts, moved.connections.reused], [2, 1])
  assert.deepEqual([engineRun(holderMoves, { channels: 'session' }).result.connections.attempts], [1])
})

test('a page view\'s new peer record lists its holdings as never chosen, as a new peer id\'s are', () => {
  // D gets x from the origin; A gets x from D (D's entry chosen at 1); G asks: A (never chosen)
  // before D, so A's entry is chosen at 2; A starts a new page view; G2 asks with maxHolders 1.
  // Under per-session records A's entry (2) is more recent than D's (1): D serves G2. With a
  // new peer record per page, A's entry reads as never chosen: A serves G2. G and G2 are
  // receive-only, so their copies are never listed.
  const [d, a] = clientsWith(2, {})
  const [g, g2] = clientsWith(2, { receiveOnly: true })
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, d, PAGE, 0, P], [0, d, 1, 100, A],
    [1, a, PAGE, 0, P], [1, a, 1, 100, A],
    [2, g, PAGE, 0, P], [2, g, 1, 100, A],
    [3, a, PAGE, 0, P],
    [4, g2, PAGE, 0, P], [4, g2, 1, 100, A]
  ])
  const options = { receiveOnly: 0.5, seed: 1, maxHolders: 1 }
  const page = engineRun(requests, { ...options, channels: 'page' })
  assert.deepEqual([page.engine.uploaded[d], page.engine.uploaded[a]], [100, 200])
  const session = engineRun(requests, { ...options, channels: 'session' })
  assert.deepEqual([session.engine.uploaded[d], session.engine.uploaded[a]], [200, 100])
})

test('the hedge: peers win when their first byte comes by the deadline, else the first complete copy does', () => {
  // defaults: deadline 0.32 s (2 × 0.16 s TTFB), lookup 0.05 s, set-up 1 s, 625,000 B/s both ways
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 1000, A], [0, 0, 2, 1000, A], [0, 0, 3, 1000, A], [0, 0, 4, 2_000_000, A],
    // B: x needs a new channel, first byte at 1.05 s; the origin, asked at 0.32 s, is done at 0.4816 s
    [10, 1, PAGE, 0, P], [10, 1, 1, 1000, A],
    // y half a second later: the same set-up, open at 11.05, first byte at 0.55 s: the origin again
    [10.5, 1, 2, 1000, A],
    // z and the 2 MB w after the channel opened: first byte at 0.05 s, peers win
    [12, 1, 3, 1000, A], [12, 1, 4, 2_000_000, A],
    // C: w over a new channel: the origin is done at 0.32 + 0.16 + 3.2 = 3.68 s, the peer would be
    // at 1.05 + 3.2 = 4.25 s: C asks it nothing (outrun), the origin serves
    [20, 2, PAGE, 0, P], [20, 2, 4, 2_000_000, A]
  ])
  const hedged = { hedge: 'latency', setupTime: 1 }
  const { result: r } = engineRun(requests, hedged)
  assert.equal(r.peerBytes, 2_001_000)
  assert.equal(r.hedge.racesLost, 3)
  assert.deepEqual(r.connections, { attempts: 2, failures: 0, reused: 2, setupRefusals: 0, setupsShared: 1 })
  // a peer twice as fast finishes C's w at 1.05 + 1.6 = 2.65 s, before the origin
  assert.equal(engineRun(requests, { ...hedged, peerRate: 1_250_000 }).result.peerBytes, 4_001_000)
  // no hedge: every transfer is instant, peers serve all five
  const off = engineRun(requests, { hedge: 'off', setupTime: 1 }).result
  assert.equal(off.peerBytes, 4_003_000)
  assert.equal(off.hedge.racesLost, 0)
  // a set-up longer than the client waits for (a fifth of connectTimeoutMs) never opens: no_channel.
  // A page passes over a peer that failed it for the rest of the page: B tries A once (for x),
  // C tries A and B (who fetched w); with session-long channels B tries A for each of its four,
  // but its page view reports A once, as the client does
  const slow = engineRun(requests, { hedge: 'latency', setupTime: 2, channels: 'page' }).result
  assert.equal(slow.peerBytes, 0)
  assert.deepEqual([slow.connections.attempts, slow.connections.failures, slow.reports.sent], [3, 3, 3])
  const slowSession = engineRun(requests, { hedge: 'latency', setupTime: 2, channels: 'session' }).result
  assert.deepEqual([slowSession.connections.attempts, slowSession.connections.failures, slowSession.reports.sent], [6, 6, 3])
})

test('untraversable visitors: every new connection to or from one fails, the same every time, and is reported', () => {
  const [u] = clientsWith(1, { untraversable: true })
  const [b, c] = clientsWith(2, {})
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, u, PAGE, 0, P], [0, u, 1, 100, A], [0, u, 2, 100, A],
    [10, b, PAGE, 0, P], [10, b, 1, 100, A], // fails: the origin
    [20, b, PAGE, 0, P], [20, b, 2, 100, A], // a new page, the same holder: fails again
    [30, u, PAGE, 0, P], [30, u, 3, 100, A], // U asks: C holds nothing yet, nobody else has z
    [31, c, PAGE, 0, P], [31, c, 1, 100, A] // C gets x from B, who took it from the origin
  ])
  const { result: r } = engineRun(requests, TRAITS)
  assert.equal(r.peerBytes, 100)
  assert.deepEqual([r.connections.attempts, r.connections.failures], [3, 2])
  assert.deepEqual(r.reports, { sent: 2, counted: 0, quarantines: 0, quarantinedClients: 0 })
  const none = engineRun(requests, { ...TRAITS, untraversable: 0 }).result
  assert.equal(none.peerBytes, 300)
  assert.equal(none.connections.failures, 0)
})

test('a visitor whose last new connections all failed races the origin at once and lists nothing on its next page (the client\'s reach.js), peers still tried; one that opens clears it', () => {
  const [u] = clientsWith(1, { untraversable: true })
  const [a, b, c] = clientsWith(3, {})
  // U (untraversable) holds x, y and z; A holds the 2 MB w. B asks U for x, y and z on three page
  // views (three failures in a row), then A for w: a new channel, its first byte at 1.05 s, the
  // whole at 1.05 + 2.5 = 3.55 s. The origin, asked at the 0.32-s deadline, would be done at
  // 3.68 s: A serves. Asked at once, it is done at 3.36 s: A is asked nothing (outrun).
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, u, PAGE, 0, P], [0, u, 1, 100, A], [0, u, 2, 100, A], [0, u, 3, 100, A],
    [0, a, PAGE, 0, P], [0, a, 4, 2_000_000, A], [0, a, 5, 2_000_000, A],
    [10, b, PAGE, 0, P], [10, b, 1, 100, A],
    [20, b, PAGE, 0, P], [20, b, 2, 100, A],
    [30, b, PAGE, 0, P], [30, b, 3, 100, A],
    // B's page at 40 began unreached: it lists nothing, so the 2 MB u it fetches (nobody holds it) is
    // not C's to get from B (the origin serves C too)
    [40, b, PAGE, 0, P], [40, b, 4, 2_000_000, A], [40, b, 6, 2_000_000, A],
    [45, c, PAGE, 0, P], [45, c, 6, 2_000_000, A],
    // B's channel to A opened all the same, which clears the count: the 2 MB v goes by the deadline, from A
    [50, b, PAGE, 0, P], [50, b, 5, 2_000_000, A]
  ])
  const hedged = { ...TRAITS, hedge: 'latency', setupTime: 1, peerRate: 800_000, channels: 'page' }
  const unreached = engineRun(requests, hedged).result
  assert.equal(unreached.connections.failures, 3)
  assert.equal(unreached.peerBytes, 2_000_000)
  assert.equal(unreached.hedge.racesLost, 1)
  // Two failures only (no z): B is not unreached: A serves w and v, and B serves C u.
  const twice = engineRun(requests.filter(([t, c]) => !(t === 30 && c === b)), hedged).result
  assert.equal(twice.peerBytes, 6_000_000)
  assert.equal(twice.hedge.racesLost, 0)
})

test('a page view reports a peer at most once, however many of its assets fail to reach it', () => {
  // U cannot connect to anyone; A holds x, y and z, then w
  const [u] = clientsWith(1, { untraversable: true })
  const [a] = clientsWith(1, {})
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, a, PAGE, 0, P], [0, a, 1, 100, A], [0, a, 2, 100, A], [0, a, 3, 100, A],
    [10, u, PAGE, 0, P], [10, u, 1, 100, A], [10.1, u, 2, 100, A], [10.2, u, 3, 100, A], // one view, three assets A holds
    [15, a, 4, 100, A],
    [20, u, PAGE, 0, P], [20, u, 4, 100, A] // U's next view: A again
  ])
  // page-lifetime channels: the page passes A over once it failed, and reports it once
  const page = engineRun(requests, { ...TRAITS, channels: 'page' }).result
  assert.deepEqual([page.connections.attempts, page.connections.failures, page.reports.sent], [2, 2, 2])
  // session-long channels: U tries A for each asset, but each page view reports A once
  const session = engineRun(requests, { ...TRAITS, channels: 'session' }).result
  assert.deepEqual([session.connections.attempts, session.connections.failures, session.reports.sent], [4, 4, 2])
  assert.equal(session.peerBytes, 0)
  // the coordinator counts only the reports sent
  const counted = engineRun(requests, { ...TRAITS, channels: 'session', reportRule: 'all' }).result
  assert.deepEqual(counted.reports, { sent: 2, counted: 2, quarantines: 0, quarantinedClients: 0 })
})

test('receive-only visitors fetch from peers but are never listed', () => {
  const [r1] = clientsWith(1, { receiveOnly: true })
  const [b] = clientsWith(1, {})
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, r1, PAGE, 0, P], [0, r1, 1, 100, A], // stored, not announced
    [10, b, PAGE, 0, P], [10, b, 1, 100, A], [10, b, 2, 100, A], // x from the origin: R is not listed
    [20, r1, PAGE, 0, P], [20, r1, 2, 100, A] // R gets y from B
  ])
  const { result: r } = engineRun(requests, TRAITS)
  assert.equal(r.peerBytes, 100)
  assert.equal(r.coordinator.updates, 2, "only B's two fetches are announced")
  assert.equal(engineRun(requests, { ...TRAITS, receiveOnly: 0 }).result.peerBytes, 200)
})

test('upload budgets: a client stops serving once it has served its session\'s or its day\'s bytes', () => {
  const requests = /** @type {[number, number, number, number, number][]} */ ([
    [0, 0, PAGE, 0, P], [0, 0, 1, 1000, A], [0, 0, 2, 1000, A], [0, 0, 3, 1000, A],
    [10, 1, PAGE, 0, P], [10, 1, 1, 1000, A], // A has served 1000
    [11, 2, PAGE, 0, P], [11, 2, 2, 1000, A], // 2000: past 1500, A stops at once
    [12, 3, PAGE, 0, P], [12, 3, 3, 1000, A], // the origin
    [5000, 0, PAGE, 0, P], [5001, 4, PAGE, 0, P], [5001, 4, 1, 1000, A], // A's next session, same day
    [90000, 0, PAGE, 0, P], [90001, 5, PAGE, 0, P], [90001, 5, 2, 1000, A] // the next UTC day
  ])
  const session = engineRun(requests, { uploadSession: 1500 }).result
  assert.equal(session.peerRequests, 4, 'a new session has a new budget')
  assert.deepEqual(session.uploadBudget, { sessionStops: 1, dayStops: 0 })
  const day = engineRun(requests, { uploadDay: 1500 }).result
  assert.equal(day.peerRequests, 3, 'not in the same day\'s next session; again the next day')
  assert.deepEqual(day.uploadBudget, { sessionStops: 0, dayStops: 1 })
  assert.equal(engineRun(requests, {}).result.peerRequests, 5)
})

test('quarantine: under the old rule three reporters of failed connections quarantine a good visitor; under the coordinator\'s, nobody', () => {
  // U1–U3 cannot connect to anyone (and serve nobody); A holds x and stays online
  const [u1, u2, u3] = clientsWith(3, { untraversable: true, receiveOnly: true })
  const [a, g] = clientsWith(2, {})
  const keepOnline = /** @type {[number, number, number, number, number][]} */ ([[300, a, 7, 100, A], [700, a, 8, 100, A]])
  const ask = (/** @type {number} */ c, /** @type {number} */ t) => /** @type {[number, number, number, number, number][]} */ ([[t, c, PAGE, 0, P], [t, c, 1, 100, A]])
  const trace = (/** @type {number} */ third) => [...ask(a, 0), ...ask(u1, 10), ...ask(u2, 11), ...ask(u3, third), ...ask(g, third + 1), ...keepOnline].sort((x, y) => x[0] - y[0])
  const traits = { ...TRAITS, channels: 'session' }
  const old = engineRun(trace(12), { ...traits, reportRule: 'all' }).result
  assert.deepEqual(old.reports, { sent: 3, counted: 3, quarantines: 1, quarantinedClients: 1 })
  assert.equal(old.peerBytes, 0, 'G finds A unlisted')
  const current = engineRun(trace(12), { ...traits, reportRule: 'blaming' }).result
  assert.deepEqual(current.reports, { sent: 3, counted: 0, quarantines: 0, quarantinedClients: 0 })
  assert.equal(current.peerBytes, 100, 'G gets x from A')
  // reports count within reportWindow (600 s): the third 601 s after the first does not quarantine
  const spread = engineRun(trace(611), { ...traits, reportRule: 'all' }).result
  assert.deepEqual(spread.reports, { sent: 3, counted: 3, quarantines: 0, quarantinedClients: 0 })
  assert.equal(spread.peerBytes, 100)
})
