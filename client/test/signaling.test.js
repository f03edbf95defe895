/**
 * The coordinator connection. First against real coordinators (port 0), with
 * `ws` standing in for the browser's WebSocket: join with holdings,
 * request/reply by ref, re-join after a restart, fail over to another
 * coordinator, the rate limit. Then the choice of coordinator — failover,
 * `alternates`, `move`, MGH_ERR_DRAINING — and what becomes of requests in
 * flight (a lookup sent again after the next welcome, requests failed by a
 * ref-less MGH_ERR_RATE_LIMITED) against a fake WebSocket on node:test's mock
 * timers (and clock), so every backoff and deadline is stepped through, not waited out.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { startCoordinator } from '../../coordinator/src/server.js'
import { signJoinToken, verifyJoinToken } from '../../coordinator/src/join-token.js'
import { ERRORS, PEER_ID_PATTERN } from '../../protocol/index.js'
import { BAR_MS, FAILED_MS, STALE_MS, Signaling } from '../src/signaling.js'
import { coordinatorUrls } from '../src/config.js'
import { Stats } from '../src/stats.js'
import { FakeWebSocket } from './fake-websocket.js'

const h = (/** @type {number} */ i) => `sha256-${String(i).padStart(43, 'A')}=`
before(() => { /** @type {any} */ (globalThis).WebSocket ??= WebSocket })
after(() => { if (globalThis.WebSocket === /** @type {any} */ (WebSocket)) delete (/** @type {any} */ (globalThis)).WebSocket })

/** @param {Signaling} s @returns {Promise<any>} the next `welcome` event */
const welcomed = (s) => new Promise((resolve) => s.on('welcome', resolve))

/**
 * Stop, and wait for the socket's close (so no close handshake is left to
 * finish under a later test's mock timers).
 * @param {Signaling} s
 */
const stopped = (s) => {
  const down = s.ws ? new Promise((resolve) => s.on('down', resolve)) : null
  s.stop()
  return down
}

/**
 * The holders a fresh client of `url` is told of for `hash`.
 * @param {string} url
 * @param {string} hash
 * @returns {Promise<string[]>}
 */
async function holdersSeenAt (url, hash) {
  const probe = new Signaling({ urls: [url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
  probe.start()
  await welcomed(probe)
  try {
    return (await probe.request({ type: 'lookup', hash }, 2000)).peers
  } finally {
    await stopped(probe)
  }
}

test('joins with its holdings, then answers lookups by ref', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const a = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [h(1), h(2)] })
  const b = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
  try {
    a.start()
    b.start()
    await Promise.all([welcomed(a), welcomed(b)])
    assert.match(/** @type {string} */ (a.id), PEER_ID_PATTERN)
    assert.ok((a.ice.iceServers ?? []).some((s) => String(s.urls).startsWith('stun:127.0.0.1')), 'the coordinator\'s own STUN server')
    const reply = await b.request({ type: 'lookup', hash: h(2) }, 2000)
    assert.deepEqual(reply.peers, [a.id])
    await assert.rejects(b.request({ type: 'lookup', hash: 'nope' }, 2000), { code: 'MGH_ERR_BAD_FIELD' })
  } finally {
    await Promise.all([stopped(a), stopped(b), coordinator.close()])
  }
})

test('a lookup made afterJoin follows the join at once, before its welcome (one round trip), and is answered after it; without a join on its way it is refused', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const holder = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [h(7)] })
  const asker = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
  try {
    holder.start()
    await welcomed(holder)
    await assert.rejects(asker.request({ type: 'lookup', hashes: [h(7)] }, 2000, { afterJoin: true }), { code: 'MGH_ERR_OFFLINE' }, 'no socket, no join')
    /** @type {Promise<any>} */
    const reply = new Promise((resolve, reject) => asker.on('joining', () => {
      assert.equal(asker.joined, false, 'sent before the welcome came')
      asker.request({ type: 'lookup', hashes: [h(7)] }, 2000, { afterJoin: true }).then(resolve, reject)
    }))
    asker.start()
    assert.deepEqual((await reply).found, { [h(7)]: [holder.id] })
    assert.equal(asker.joined, true)
    assert.equal(asker.joining, null)
  } finally {
    await Promise.all([stopped(holder), stopped(asker), coordinator.close()])
  }
})

test('after the coordinator restarts it reconnects and re-joins with its current holdings', async () => {
  let coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const port = Number(new URL(coordinator.url).port)
  let have = [h(1)]
  const a = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => have })
  try {
    a.start()
    await welcomed(a)
    const down = new Promise((resolve) => a.on('down', resolve))
    await coordinator.close()
    await down
    assert.equal(a.joined, false)
    await assert.rejects(a.request({ type: 'lookup', hash: h(1) }, 1000), { code: 'MGH_ERR_OFFLINE' })
    have = [h(1), h(3)]
    const again = welcomed(a)
    coordinator = await startCoordinator({ port, stunPort: 0 })
    assert.deepEqual((await again).have, have)
    assert.deepEqual(await holdersSeenAt(coordinator.url, h(3)), [a.id])
  } finally {
    await Promise.all([stopped(a), coordinator.close()])
  }
})

test('when its coordinator stops, it joins the other listed one and announces its holdings there', async () => {
  const one = await startCoordinator({ port: 0, stunPort: 0 })
  const two = await startCoordinator({ port: 0, stunPort: 0 })
  const a = new Signaling({ urls: coordinatorUrls(`${one.url}, ${two.url}`), backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [h(7)], random: () => 0 })
  try {
    a.start()
    assert.equal((await welcomed(a)).url, one.url)
    const again = welcomed(a)
    await one.close()
    const w = await again
    assert.equal(w.url, two.url)
    assert.deepEqual(w.have, [h(7)])
    assert.deepEqual(await holdersSeenAt(two.url, h(7)), [a.id])
  } finally {
    await Promise.all([stopped(a), two.close()])
  }
})

test('over the rate limit every request waiting settles at once: answered, or MGH_ERR_RATE_LIMITED, never a timeout', { timeout: 10000 }, async () => {
  // The bucket's clock stands still: the join and 4 lookups pass, the 5th is
  // answered MGH_ERR_RATE_LIMITED (no ref), the other 5 are dropped unread.
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, rateLimitPerSecond: 10, rateLimitBurst: 5, rateLimitCloseAfter: 100 }, { now: () => 0 })
  const a = new Signaling({ urls: [coordinator.url], backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
  try {
    a.start()
    await welcomed(a)
    /** @type {any[]} */
    const warnings = []
    a.on('warning', (/** @type {any} */ m) => warnings.push(m))
    // A timeout far beyond the test's own: only the rate-limit error can settle the dropped ones in time.
    const outcomes = await Promise.all(Array.from({ length: 10 }, () =>
      a.request({ type: 'lookup', hash: h(1) }, 60000, { retry: true }).then((m) => m.type, (err) => err.code)))
    const limited = outcomes.filter((o) => o === 'MGH_ERR_RATE_LIMITED').length
    // The 4 read may be answered before the error, or after it (their replies are async): then they fail with the rest.
    assert.ok(limited >= 6 && outcomes.every((o) => o === 'holders' || o === 'MGH_ERR_RATE_LIMITED'), String(outcomes))
    assert.deepEqual(warnings.map((m) => m.code), ['MGH_ERR_RATE_LIMITED'], 'still reported')
    assert.equal(a.waiting.size, 0)
  } finally {
    await Promise.all([stopped(a), coordinator.close()])
  }
})

// ---- choosing the coordinator, on a fake WebSocket and mock timers ----

const A = 'ws://a.example:7070'
const B = 'ws://b.example:7070'
const C = 'ws://c.example:7070'
const DRAINING = ERRORS.MGH_ERR_DRAINING.message

/**
 * A Signaling over FakeWebSocket with the clock at 0; backoff 500 ms doubling to 30 s.
 * @param {import('node:test').TestContext} t
 * @param {string[]} urls
 * @param {{ random?: () => number, have?: string[] }} [o]
 */
function setup (t, urls, o = {}) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
  const real = globalThis.WebSocket
  globalThis.WebSocket = /** @type {any} */ (FakeWebSocket)
  FakeWebSocket.made = []
  const s = new Signaling({ urls, backoffBaseMs: 500, backoffMaxMs: 30000, getHave: () => o.have ?? [h(1)], random: o.random })
  t.after(() => {
    s.stop()
    globalThis.WebSocket = real
  })
  return s
}

/**
 * Play a coordinator that accepts the newest socket; resolves with the `welcome` event.
 * @param {Signaling} s
 * @param {string[]} [alternates]
 */
async function accept (s, alternates) {
  const ws = FakeWebSocket.last
  const w = welcomed(s)
  ws.open()
  const join = ws.sent[0]
  assert.equal(join.type, 'join')
  ws.receive({ type: 'welcome', ref: join.ref, id: 'x~AAAAAAAAAAAAAAAAAAAAAA', iceServers: [], holding: join.have.length, limits: {}, alternates })
  return w
}

/** Let pending promise callbacks run (the join's `await`, a client close's event). */
const settle = () => new Promise((resolve) => setImmediate(resolve))

test('the socket opens before the holdings are known; its join waits for them, then carries them', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
  const real = globalThis.WebSocket
  globalThis.WebSocket = /** @type {any} */ (FakeWebSocket)
  FakeWebSocket.made = []
  /** @type {(v?: unknown) => void} */
  let known = () => {}
  let have = /** @type {string[]} */ ([])
  const s = new Signaling({ urls: [A], backoffBaseMs: 500, backoffMaxMs: 30000, getHave: () => have, haveKnown: new Promise((resolve) => { known = resolve }) })
  t.after(() => {
    s.stop()
    globalThis.WebSocket = real
  })
  s.start()
  FakeWebSocket.last.open()
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(FakeWebSocket.last.sent, [], 'no join while the holdings are unknown')
  have = [h(1), h(2)]
  known()
  const join = await FakeWebSocket.last.nextSent()
  assert.equal(join.type, 'join')
  assert.deepEqual(join.have, [h(1), h(2)])
})

test('data-coordinator lists URLs by comma or space; the first connect picks one at random', (t) => {
  const s = setup(t, [A, B, C])
  const picked = new Set()
  // With Math.random: all three turn up in 60 tries but for a chance of 3·(2/3)^60 ≈ 10⁻¹⁰.
  for (let i = 0; i < 60; i++) {
    const one = new Signaling({ urls: [A, B, C], backoffBaseMs: 500, backoffMaxMs: 30000, getHave: () => [] })
    one.start()
    picked.add(FakeWebSocket.last.url)
    one.stop()
  }
  assert.deepEqual([...picked].sort(), [A, B, C])
  // One coordinator named twice (as the site and as an alternate may spell it) is one entry: each
  // fresh one is tried before any again, and `${A}/` never (it is A, tried as first given).
  s.learn([`${A}/`, B])
  s.start()
  /** @type {string[]} */
  const tries = []
  for (let i = 0; i < 100 && tries.length < 4; i++) {
    const ws = FakeWebSocket.last
    if (ws.readyState === 0) {
      tries.push(ws.url)
      ws.end(1006) // refused
    }
    t.mock.timers.tick(1000)
  }
  assert.deepEqual(tries.slice(0, 3).sort(), [A, B, C])
  assert.ok([A, B, C].includes(tries[3]), `then one of them again: ${tries}`)
})

test('a lost connection goes to another URL within 500 ms, re-joins there with the holdings, and counts a switch', async (t) => {
  // 0.99: the last candidate, and the longest jitter
  const s = setup(t, [A, B, C], { random: () => 0.99, have: [h(1), h(2)] })
  const stats = new Stats()
  s.on('welcome', (/** @type {any} */ w) => stats.joined(w.url))
  s.start()
  assert.equal((await accept(s)).url, C)
  FakeWebSocket.last.end(1006)
  assert.equal(s.joined, false)
  t.mock.timers.tick(240)
  assert.equal(FakeWebSocket.made.length, 1, 'not before the first backoff step\'s fixed half')
  t.mock.timers.tick(260)
  assert.equal(FakeWebSocket.made.length, 2)
  assert.notEqual(FakeWebSocket.last.url, C, 'another coordinator')
  const w = await accept(s)
  assert.equal(w.url, B)
  assert.deepEqual(w.have, [h(1), h(2)])
  assert.deepEqual(FakeWebSocket.last.sent[0].have, [h(1), h(2)], 'announced again in the join')
  assert.deepEqual(stats.snapshot().coordinator, { url: B, switches: 1 })
  stats.joined(B)
  assert.equal(stats.counts.coordinator.switches, 1, 'joining the same one again is no switch')
})

test('retries cycle through the known URLs with growing, capped backoff', async (t) => {
  const s = setup(t, [A, B], { random: () => 0 })
  s.start()
  await accept(s)
  /** @type {{ url: string, at: number }[]} */
  const tries = []
  FakeWebSocket.last.end(1006)
  for (let i = 0; i < 300; i++) {
    t.mock.timers.tick(1000)
    const ws = FakeWebSocket.last
    if (ws.readyState === 0) {
      tries.push({ url: ws.url, at: Date.now() })
      ws.end(1006) // refused
    }
  }
  assert.deepEqual(tries.slice(0, 6).map((x) => x.url), [B, A, B, A, B, A], 'never the same one twice in a row while another is known')
  const gaps = tries.slice(1).map((x, i) => x.at - tries[i].at)
  assert.ok(gaps.every((g, i) => i === 0 || g >= gaps[i - 1]), 'the delay never shrinks')
  assert.equal(Math.max(...gaps), 15000, 'capped at backoffMaxMs (30 s, of which at least half)')
})

test('alternates heard in welcome join the rotation', async (t) => {
  const s = setup(t, [A])
  s.start()
  await accept(s, [B])
  FakeWebSocket.last.end(1006)
  t.mock.timers.tick(500)
  assert.equal(FakeWebSocket.last.url, B, 'failover to the learned alternate')
})

test('a dead shard with stale URLs known: the next try goes to one the last welcome named; URLs that failed wait while fresh ones remain, each fresh one after the backoff\'s first step', async (t) => {
  const D = 'ws://d.example:7070'
  // 0.99: the last candidate of each list, and the longest jitter
  const s = setup(t, [A, B, C, D], { random: () => 0.99 })
  s.start(A)
  await accept(s, [B]) // the registry's live shards: B only (C and D died earlier, or were never up)
  FakeWebSocket.last.end(1006) // A dies
  t.mock.timers.tick(500)
  assert.equal(FakeWebSocket.last.url, B, 'the named one, though C and D come later in the list')
  /** @type {{ url: string, at: number }[]} */
  const tries = []
  const fail = () => {
    tries.push({ url: FakeWebSocket.last.url, at: Date.now() })
    FakeWebSocket.last.end(1006) // refused
  }
  fail() // B is not up after all
  for (let i = 0; i < 200 && tries.length < 7; i++) {
    t.mock.timers.tick(100)
    if (FakeWebSocket.last.readyState === 0 && Date.now() > tries[tries.length - 1].at) fail()
  }
  const urls = tries.map((x) => x.url)
  const gaps = tries.slice(1).map((x, i) => x.at - tries[i].at)
  // Then the two it has not tried, each within the first step (≤ 500 ms), not after a growing backoff.
  assert.deepEqual(urls.slice(0, 3), [B, D, C])
  assert.ok(gaps.slice(0, 2).every((g) => g <= 500), `fresh URLs after the first step: ${gaps}`)
  // All four have failed: the one that failed longest ago first (A), then round again, the backoff growing.
  assert.deepEqual(urls.slice(3, 7), [A, B, D, C])
  assert.ok(gaps.slice(2).every((g, i) => i === 0 || g >= gaps[i + 1]), `growing: ${gaps}`)
  // A welcome clears what failed there; once FAILED_MS has passed, the others are fresh again.
  const made = FakeWebSocket.made.length
  while (FakeWebSocket.made.length === made) t.mock.timers.tick(100)
  const { url } = await accept(s, [A, C])
  assert.equal(s.failedLately(url), false)
  t.mock.timers.tick(FAILED_MS)
  FakeWebSocket.last.end(1006)
  t.mock.timers.tick(500)
  assert.ok([A, C].includes(FakeWebSocket.last.url) && FakeWebSocket.last.url !== url, 'one the last welcome named, at the first step')
})

test('move: in-flight requests fail at once, it joins an alternate at once and does not go back to the sender for 60 s', async (t) => {
  const s = setup(t, [A], { random: () => 0.5 })
  s.start()
  await accept(s)
  const lookup = s.request({ type: 'lookup', hash: h(1) }, 2000)
  const old = FakeWebSocket.last
  old.receive({ type: 'move', alternates: [B] })
  await assert.rejects(lookup, { code: 'MGH_ERR_OFFLINE' })
  assert.ok(old.readyState >= 2, 'the client left the draining coordinator')
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.last.url, B)
  // B's registry may not have seen A start draining yet: that does not bring A back.
  await accept(s, [A])
  await settle()
  assert.equal(FakeWebSocket.made.length, 2, 'the old socket\'s close event starts nothing')

  // B dies and stays dead: the client keeps trying B, never A, until A's bar ends.
  FakeWebSocket.last.end(1006)
  /** @type {{ url: string, at: number }[]} */
  const tries = []
  for (let i = 0; i < 900; i++) {
    t.mock.timers.tick(100)
    const ws = FakeWebSocket.last
    if (ws.readyState === 0) {
      tries.push({ url: ws.url, at: Date.now() })
      ws.end(1006)
    }
  }
  assert.ok(tries.length > 3)
  assert.ok(tries.filter((x) => x.at < BAR_MS).every((x) => x.url === B), 'not back to the sender within 60 s')
  assert.ok(tries.some((x) => x.at >= BAR_MS && x.url === A), 'back in the rotation after it')
})

test('rolling restart: the restarted coordinator, named again later, is where the next move goes', async (t) => {
  const s = setup(t, [A, B], { random: () => 0 })
  s.start()
  await accept(s, [B])
  FakeWebSocket.last.receive({ type: 'move', alternates: [B] })
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.last.url, B)
  await accept(s, [])
  t.mock.timers.tick(STALE_MS) // A restarts; then B drains and names it
  FakeWebSocket.last.receive({ type: 'move', alternates: [A] })
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.last.url, A, 'at once, to the coordinator named live')
})

test('MGH_ERR_DRAINING in reply to join, or a 1012 draining close: an alternate at once; a plain 1012 shutdown: the backoff', async (t) => {
  const s = setup(t, [A, C], { random: () => 0 })
  s.start()
  const first = FakeWebSocket.last
  assert.equal(first.url, A)
  first.open()
  first.receive({ type: 'error', code: 'MGH_ERR_DRAINING', message: DRAINING, alternates: [B], ref: first.sent[0].ref })
  await settle()
  first.end(1012, DRAINING) // the coordinator then closes it: nothing more happens
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.made.length, 2)
  assert.notEqual(FakeWebSocket.last.url, A)
  const w = await accept(s)

  // Its coordinator closes 1012 for a drain: away at once, and the sender is barred.
  FakeWebSocket.last.end(1012, DRAINING)
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.made.length, 3)
  assert.ok(![A, w.url].includes(FakeWebSocket.last.url), 'neither drained coordinator')
  await accept(s)

  // A plain shutdown is a lost connection: the backoff, and the coordinator stays in the rotation.
  const before = FakeWebSocket.made.length
  FakeWebSocket.last.end(1012, ERRORS.MGH_ERR_SHUTTING_DOWN.message)
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.made.length, before)
  t.mock.timers.tick(500)
  assert.equal(FakeWebSocket.made.length, before + 1)
})

test('two draining coordinators naming each other (registries a beat behind): one hop at once, then the backoff, no loop', async (t) => {
  const s = setup(t, [A], { random: () => 0 })
  s.start()
  await accept(s)
  FakeWebSocket.last.receive({ type: 'move', alternates: [B] })
  t.mock.timers.tick(0)
  const b = FakeWebSocket.last
  assert.equal(b.url, B)
  b.open()
  b.receive({ type: 'error', code: 'MGH_ERR_DRAINING', message: DRAINING, alternates: [A], ref: b.sent[0].ref })
  await settle()
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.made.length, 2, 'the second hop waits')
  t.mock.timers.tick(500)
  assert.equal(FakeWebSocket.last.url, A, 'then goes to the coordinator B named as live')
})

test('sent away by every coordinator in turn (a rolling restart): the next try goes to the one that sent it away longest ago', async (t) => {
  let draw = 0
  const s = setup(t, [A, B, C], { random: () => draw })
  s.start()
  await accept(s)
  for (const [from, names] of /** @type {[string, string[]][]} */ ([[A, [B, C]], [B, [A, C]]])) {
    assert.equal(FakeWebSocket.last.url, from)
    FakeWebSocket.last.receive({ type: 'move', alternates: names })
    t.mock.timers.tick(0)
    await accept(s)
    t.mock.timers.tick(1000)
  }
  assert.equal(FakeWebSocket.last.url, C)
  draw = 0.99 // a random pick among all three would now take C again
  const before = FakeWebSocket.made.length
  FakeWebSocket.last.receive({ type: 'move', alternates: [B, A] })
  t.mock.timers.tick(30_000)
  assert.equal(FakeWebSocket.made[before].url, A, 'A sent it away first, then B, then C')
})

test('a single-coordinator site: back after a restart, and after a drain it waits out the backoff and tries the same URL', async (t) => {
  const s = setup(t, [A], { random: () => 0 })
  s.start()
  await accept(s)
  FakeWebSocket.last.end(1012, ERRORS.MGH_ERR_SHUTTING_DOWN.message)
  t.mock.timers.tick(250)
  assert.equal(FakeWebSocket.last.url, A)
  FakeWebSocket.last.end(1006) // still restarting: refused
  t.mock.timers.tick(500)
  assert.equal(FakeWebSocket.made.length, 3)
  assert.deepEqual((await accept(s)).have, [h(1)])

  FakeWebSocket.last.receive({ type: 'move', alternates: [] })
  t.mock.timers.tick(0)
  assert.equal(FakeWebSocket.made.length, 3, 'nowhere else to go: not at once')
  t.mock.timers.tick(250)
  assert.equal(FakeWebSocket.made.length, 4)
  assert.equal(FakeWebSocket.last.url, A)
  assert.equal((await accept(s)).url, A)
})

test('requests fail with MGH_ERR_OFFLINE at once when the connection drops, and while it is down', async (t) => {
  const s = setup(t, [A, B])
  s.start()
  await accept(s)
  const pending = [s.request({ type: 'lookup', hash: h(1) }, 60000), s.request({ type: 'update', add: [h(2)] }, 60000)]
  FakeWebSocket.last.end(1006)
  for (const p of pending) await assert.rejects(p, { code: 'MGH_ERR_OFFLINE' })
  await assert.rejects(s.request({ type: 'lookup', hash: h(1) }, 60000), { code: 'MGH_ERR_OFFLINE' })
  assert.equal(s.waiting.size, 0)
})

// ---- requests across a lost connection and the rate limit, on a fake WebSocket and mock timers ----

/** @param {Promise<unknown>} p @returns {{ outcome: unknown }} what `p` settled with (a code when rejected), once it has */
const watch = (p) => {
  const w = { outcome: /** @type {unknown} */ (undefined) }
  p.then((v) => { w.outcome = v }, (err) => { w.outcome = err.code })
  return w
}

test('a lookup in flight when the coordinator dies is sent again, once, with a new ref, after the welcome of the next one', async (t) => {
  const s = setup(t, [A, B], { random: () => 0 })
  s.start()
  await accept(s)
  const a = FakeWebSocket.last
  const lookup = watch(s.request({ type: 'lookup', hash: h(1) }, 2000, { retry: true }))
  const update = s.request({ type: 'update', add: [h(2)] }, 2000)
  const offer = s.request({ type: 'connect', to: 'x~BBBBBBBBBBBBBBBBBBBBBB', signal: { cid: 'c', sdp: { type: 'offer', sdp: '' } } }, 2000)
  const first = a.sent[1]
  a.end(1006)
  // Not safe to repeat (or repeated by the re-join): they fail as before.
  await assert.rejects(update, { code: 'MGH_ERR_OFFLINE' })
  await assert.rejects(offer, { code: 'MGH_ERR_OFFLINE' })
  await settle()
  assert.equal(lookup.outcome, undefined, 'the lookup waits')
  assert.equal(s.waiting.size, 0)
  assert.equal(s.parked.size, 1)

  t.mock.timers.tick(250)
  assert.equal(FakeWebSocket.last.url, B)
  await accept(s)
  const b = FakeWebSocket.last
  assert.equal(b.sent.length, 2, 'the join, then the lookup and nothing else')
  const again = b.sent[1]
  assert.deepEqual({ ...again, ref: 0 }, { ...first, ref: 0 })
  assert.notEqual(again.ref, first.ref)
  b.receive({ type: 'holders', hash: h(1), peers: ['x~CCCCCCCCCCCCCCCCCCCCCC'], ref: again.ref })
  await settle()
  assert.deepEqual(/** @type {any} */ (lookup.outcome).peers, ['x~CCCCCCCCCCCCCCCCCCCCCC'])
  assert.equal(s.waiting.size + s.parked.size, 0)

  // Once: cut off again after its retry, it fails at once.
  const twice = s.request({ type: 'lookup', hash: h(3) }, 2000, { retry: true })
  b.end(1006)
  t.mock.timers.tick(250)
  await accept(s)
  const sent = FakeWebSocket.last.sent
  FakeWebSocket.last.end(1006)
  await assert.rejects(twice, { code: 'MGH_ERR_OFFLINE' })
  assert.deepEqual(sent.map((m) => m.type), ['join', 'lookup'])
  // Asked while offline: fails at once, as ever.
  await assert.rejects(s.request({ type: 'lookup', hash: h(1) }, 2000, { retry: true }), { code: 'MGH_ERR_OFFLINE' })
  assert.equal(s.waiting.size + s.parked.size, 0)
})

test('a cut-off lookup still fails with MGH_ERR_REQUEST_TIMEOUT at its first deadline: with no welcome, or no reply after the retry', async (t) => {
  const s = setup(t, [A], { random: () => 0 })
  s.start()
  await accept(s)
  const never = watch(s.request({ type: 'lookup', hash: h(1) }, 2000, { retry: true }))
  FakeWebSocket.last.end(1006)
  t.mock.timers.tick(250) // the reconnect is refused, and the next one too
  FakeWebSocket.last.end(1006)
  t.mock.timers.tick(1749)
  await settle()
  assert.equal(never.outcome, undefined)
  t.mock.timers.tick(1)
  await settle()
  assert.equal(never.outcome, 'MGH_ERR_REQUEST_TIMEOUT')
  assert.equal(s.parked.size, 0)

  // Re-joined 1.5 s into its 2 s: sent again, and given only the 0.5 s left.
  await accept(s)
  const late = watch(s.request({ type: 'lookup', hash: h(2) }, 2000, { retry: true }))
  FakeWebSocket.last.end(1006)
  t.mock.timers.tick(1500)
  await accept(s)
  assert.equal(FakeWebSocket.last.sent[1]?.type, 'lookup')
  t.mock.timers.tick(499)
  await settle()
  assert.equal(late.outcome, undefined)
  t.mock.timers.tick(1)
  await settle()
  assert.equal(late.outcome, 'MGH_ERR_REQUEST_TIMEOUT')
  assert.equal(s.waiting.size, 0)
})

test('stop() fails a lookup waiting for the next welcome at once', async (t) => {
  const s = setup(t, [A])
  s.start()
  await accept(s)
  const lookup = s.request({ type: 'lookup', hash: h(1) }, 60000, { retry: true })
  FakeWebSocket.last.end(1006)
  assert.equal(s.parked.size, 1)
  s.stop()
  await assert.rejects(lookup, { code: 'MGH_ERR_OFFLINE' })
  assert.equal(s.parked.size, 0)
})

test('MGH_ERR_RATE_LIMITED without a ref fails every request sent before it at once, and is still a warning', async (t) => {
  const s = setup(t, [A])
  s.start()
  await accept(s)
  /** @type {any[]} */
  const warnings = []
  s.on('warning', (/** @type {any} */ m) => warnings.push(m))
  const ws = FakeWebSocket.last
  const pending = [
    s.request({ type: 'lookup', hash: h(1) }, 60000, { retry: true }),
    s.request({ type: 'update', add: [h(2)] }, 60000),
    s.request({ type: 'connect', to: 'x~BBBBBBBBBBBBBBBBBBBBBB', signal: {} }, 60000)
  ]
  // Another ref-less error fails nothing.
  ws.receive({ type: 'error', code: 'MGH_ERR_BAD_JSON', message: ERRORS.MGH_ERR_BAD_JSON.message })
  assert.equal(s.waiting.size, 3)
  const limited = { type: 'error', code: 'MGH_ERR_RATE_LIMITED', message: ERRORS.MGH_ERR_RATE_LIMITED.message }
  ws.receive(limited)
  for (const p of pending) await assert.rejects(p, { code: 'MGH_ERR_RATE_LIMITED', message: limited.message })
  assert.equal(s.waiting.size, 0)
  assert.deepEqual(warnings.map((m) => m.code), ['MGH_ERR_BAD_JSON', 'MGH_ERR_RATE_LIMITED'])
  assert.equal(s.joined, true, 'the connection carries on')

  // A request sent after it is not touched by it; a late reply to a failed one is ignored.
  const after = s.request({ type: 'lookup', hash: h(3) }, 60000)
  ws.receive({ type: 'holders', hash: h(1), peers: [], ref: ws.sent[1].ref })
  ws.receive({ type: 'holders', hash: h(3), peers: [], ref: ws.sent[4].ref })
  assert.deepEqual((await after).hash, h(3))
})

test('a page its site\'s coordinators refuse (origin not allowed, bad token) stops trying at once; a good token is renewed by each welcome', async () => {
  const SHOP = 'https://shop.example'
  const SECRET = 'a-secret-of-at-least-32-characters!'
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, allowedOrigins: [SHOP], tokenSecrets: [SECRET] })
  const real = globalThis.WebSocket
  /** @param {string} origin the page's origin, as a browser would send it */
  const pageAt = (origin) => {
    globalThis.WebSocket = /** @type {any} */ (class extends WebSocket { constructor (/** @type {string} */ url) { super(url, { origin }) } })
  }
  /** @type {Signaling[]} */
  const clients = []
  /** @param {string} [token] */
  const client = (token) => {
    const s = new Signaling({ urls: [coordinator.url], token, backoffBaseMs: 20, backoffMaxMs: 40, getHave: () => [] })
    clients.push(s)
    return s
  }
  /** @param {Signaling} s @returns {Promise<any>} the refusal */
  const refusal = (s) => new Promise((resolve) => s.on('refused', resolve))
  try {
    pageAt(SHOP)
    const token = signJoinToken({ origin: SHOP, visitor: 'v' }, SECRET)
    const good = client(token)
    good.start()
    await welcomed(good)
    assert.notEqual(good.token, token, 'the welcome brought a fresh token')
    assert.equal(verifyJoinToken(good.token, [SECRET], { origin: SHOP }).visitor, 'v')

    for (const [origin, given, code] of [
      [SHOP, undefined, 'MGH_ERR_TOKEN_MISSING'],
      [SHOP, token.slice(0, -2) + 'AA', 'MGH_ERR_TOKEN_INVALID'],
      ['https://evil.example', token, 'MGH_ERR_ORIGIN_NOT_ALLOWED']
    ]) {
      pageAt(/** @type {string} */ (origin))
      const s = client(given)
      const lookup = new Promise((resolve) => s.on('refused', () => resolve(s.request({ type: 'lookup', hash: h(1) }, 2000).catch((err) => err.code))))
      s.start()
      assert.equal((await refusal(s)).code, code)
      assert.equal(s.stopped, true)
      assert.equal(await lookup, 'MGH_ERR_OFFLINE', 'a lookup after the refusal fails at once (the load goes to the origin)')
    }
    const connections = coordinator.counters.connections
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(coordinator.counters.connections, connections, 'no reconnection after a refusal, whatever the backoff')
  } finally {
    globalThis.WebSocket = real
    await Promise.all([...clients.map((s) => s.ws ? stopped(s) : s.stop()), coordinator.close()])
  }
})

test('unreachable: said once every known coordinator has closed on us since the last welcome, not before', async (t) => {
  const s = setup(t, [A, B], { random: () => 0 })
  let said = 0
  s.on('unreachable', () => said++)
  s.start()
  FakeWebSocket.last.end(1006) // the first refuses
  assert.equal(said, 0, 'another is still untried')
  t.mock.timers.tick(1000)
  FakeWebSocket.last.end(1006) // and the second
  assert.equal(said, 1, 'both have refused: loads stop waiting')
  t.mock.timers.tick(2000)
  await accept(s) // one comes back
  assert.equal(s.unreachable(), false)
  FakeWebSocket.last.end(1006) // a joined socket lost is not a refusal
  assert.equal(said, 1)
})
