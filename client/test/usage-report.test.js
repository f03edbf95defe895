/**
 * The page's byte reports (usage-report.js): what a `usage` message says, when
 * one goes out (loads settled, at the latest `intervalMs`, hidden, page gone),
 * and where what cannot be sent waits (the next page's report, or memory).
 */
import { test, mock, afterEach } from 'node:test'
import assert from 'node:assert/strict'
import { Emitter } from '../src/emitter.js'
import { Stats } from '../src/stats.js'
import { SETTLE_MS, STASH_KEY, UsageReport } from '../src/usage-report.js'
import { LIMITS } from '../../protocol/index.js'

afterEach(() => mock.timers.reset())

/** A page's globals: its events (fired by `fire`), address and storage. */
function fakePage (storage = new Map()) {
  /** @type {Record<string, (() => void)[]>} */
  const listeners = {}
  return {
    storage,
    location: { href: 'https://shop.example/products' },
    localStorage: /** @type {Storage} */ (/** @type {unknown} */ ({
      getItem: (/** @type {string} */ k) => storage.get(k) ?? null,
      setItem: (/** @type {string} */ k, /** @type {string} */ v) => { storage.set(k, v) },
      removeItem: (/** @type {string} */ k) => { storage.delete(k) }
    })),
    addEventListener: (/** @type {string} */ type, /** @type {() => void} */ fn) => { (listeners[type] ??= []).push(fn) },
    /** @param {string} type */
    fire: (type) => { for (const fn of listeners[type] ?? []) fn() }
  }
}

/**
 * A report on a fake page, and what it sent. `link.join()` joins (again), with its `welcome`.
 * @param {{ env?: any, intervalMs?: number }} [o]
 */
function start ({ env = fakePage(), intervalMs = 10_000 } = {}) {
  /** @type {any[]} */
  const sent = []
  const signaling = Object.assign(new Emitter(), { send: (/** @type {object} */ msg) => link.joined && sent.push(msg) > 0 })
  const link = {
    joined: true,
    join () {
      link.joined = true
      signaling.emit('welcome', {})
    }
  }
  const stats = new Stats()
  const report = new UsageReport({ signaling, stats, intervalMs, env })
  return { sent, link, stats, report, env }
}

/** @param {Record<string, unknown>} message @returns {Record<string, unknown>} it without its id */
const noId = ({ id, ...message }) => message

/** @param {Stats} stats @param {string} url @param {'peer' | 'origin' | 'cache'} source @param {number} bytes */
const load = (stats, url, source, bytes) => stats.loaded({ url, hash: 'h', source, bytes, ms: 1 })

test('a report goes out SETTLE_MS after the last byte counted: one for a burst of loads, none while nothing is new', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const { sent, stats } = start()
  mock.timers.tick(60_000)
  assert.equal(sent.length, 0, 'nothing new, nothing sent')

  load(stats, '/img/a.png', 'peer', 5000)
  mock.timers.tick(SETTLE_MS - 1)
  load(stats, 'https://shop.example/img/b.png', 'peer', 7000)
  load(stats, '/img/c.png', 'origin', 3000)
  load(stats, '/img/a.png', 'cache', 5000)
  stats.served({ hash: 'h1', peer: 'p', bytes: 5000 })
  mock.timers.tick(SETTLE_MS - 1)
  assert.equal(sent.length, 0, 'still loading')
  mock.timers.tick(1)
  assert.deepEqual(sent, [{ type: 'usage', peer: 12000, origin: 3000, cache: 5000, served: 5000, assets: [['/img/a.png', 5000], ['/img/b.png', 7000]] }])
  mock.timers.tick(60_000)
  assert.equal(sent.length, 1, 'nothing new since')
})

test('while bytes keep coming, a report at the latest intervalMs after the first unreported one: never more than one per SETTLE_MS', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const { sent, stats } = start({ intervalMs: 5000 })
  /** @type {number[]} when each report went out */
  const at = []
  let now = 0
  for (let i = 0; i < 21; i++) {
    stats.served({ hash: 'h', peer: 'p', bytes: 1 })
    for (let t = 0; t < SETTLE_MS - 1; t++) {
      mock.timers.tick(1)
      now++
      if (sent.length > at.length) at.push(now)
    }
  }
  // A byte every 999 ms for 21 s: reported 5 s after the first unreported one (at 5 s, 11 s, 17 s), never on settling.
  assert.deepEqual(at, [5000, 5994 + 5000, 11_988 + 5000])
  mock.timers.tick(SETTLE_MS)
  assert.equal(sent.length, 4, 'and once settled')
  assert.equal(sent.reduce((n, m) => n + m.served, 0), 21, 'each byte once')
})

test('hidden or shown, gone (pagehide, or the host calls send()), joined: reported at once', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const { sent, stats, report, env, link } = start()
  load(stats, '/img/a.png', 'origin', 100)
  env.fire('visibilitychange')
  assert.deepEqual(sent, [{ type: 'usage', peer: 0, origin: 100, cache: 0, served: 0, assets: [] }])
  env.fire('pagehide')
  env.fire('visibilitychange')
  assert.equal(sent.length, 1, 'nothing new')
  stats.served({ hash: 'h', peer: 'p', bytes: 50 })
  env.fire('pagehide')
  assert.deepEqual(sent[1], { type: 'usage', peer: 0, origin: 0, cache: 0, served: 50, assets: [] })
  load(stats, '/img/b.png', 'peer', 10)
  report.send()
  assert.deepEqual(sent[2], { type: 'usage', peer: 10, origin: 0, cache: 0, served: 0, assets: [['/img/b.png', 10]] })
  // Not joined (the socket lost): waits until the next welcome.
  link.joined = false
  load(stats, '/img/c.png', 'cache', 20)
  mock.timers.tick(60_000)
  assert.equal(sent.length, 3)
  link.join()
  assert.deepEqual(sent[3], { type: 'usage', peer: 0, origin: 0, cache: 20, served: 0, assets: [], id: sent[3].id })
  assert.match(sent[3].id, /^[\w-]{1,32}$/, 'what waited carries an id')
  mock.timers.tick(60_000)
  assert.equal(sent.length, 4, 'each byte reported once')
})

test('what a page cannot send (its socket already closed as it goes) the next page reports, once', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const storage = new Map()
  const first = start({ env: fakePage(storage) })
  load(first.stats, '/img/a.png', 'origin', 3000)
  load(first.stats, '/img/b.png', 'peer', 2000)
  first.link.joined = false
  first.env.fire('pagehide')
  assert.equal(first.sent.length, 0)
  assert.ok(storage.has(STASH_KEY), 'kept in storage')

  const next = start({ env: fakePage(storage) })
  load(next.stats, '/img/c.png', 'cache', 1000)
  mock.timers.tick(SETTLE_MS)
  assert.deepEqual(next.sent.map(noId), [
    { type: 'usage', peer: 0, origin: 0, cache: 1000, served: 0, assets: [] },
    { type: 'usage', peer: 2000, origin: 3000, cache: 0, served: 0, assets: [['/img/b.png', 2000]] }
  ], 'its own, then the first page\'s as it was stashed')
  assert.equal(next.sent[0].id, undefined, 'what a page sends at once needs no id')
  assert.ok(next.sent[1].id)
  assert.ok(!storage.has(STASH_KEY))

  // The first page (say, only hidden) is back and joins again: nothing is left to send twice.
  first.link.join()
  first.env.fire('visibilitychange')
  assert.equal(first.sent.length, 0)
  assert.equal(next.sent.length, 2)

  // Taken as a page starts (a closing Firefox context empties storage before the page's last
  // report): reported SETTLE_MS later on its own, or with the page's last report.
  next.link.joined = false
  load(next.stats, '/img/d.png', 'origin', 7)
  next.report.send()
  const third = start({ env: fakePage(storage) })
  assert.ok(!storage.has(STASH_KEY))
  mock.timers.tick(SETTLE_MS)
  assert.deepEqual(third.sent.map(noId), [{ type: 'usage', peer: 0, origin: 7, cache: 0, served: 0, assets: [] }])
  next.link.joined = false
  load(next.stats, '/img/e.png', 'origin', 8)
  next.report.send()
  const fourth = start({ env: fakePage(storage) })
  storage.clear()
  fourth.env.fire('pagehide')
  assert.deepEqual(fourth.sent.map(noId), [{ type: 'usage', peer: 0, origin: 8, cache: 0, served: 0, assets: [] }])

  // A stash of the client before ids (one object, no type nor id) is sent as a usage of its own.
  storage.set(STASH_KEY, JSON.stringify({ peer: 5, origin: 0, cache: 0, served: 0, assets: [['/img/f.png', 5]] }))
  const older = start({ env: fakePage(storage) })
  older.report.send()
  assert.deepEqual(older.sent.map(noId), [{ type: 'usage', peer: 5, origin: 0, cache: 0, served: 0, assets: [['/img/f.png', 5]] }])
  assert.ok(older.sent[0].id)

  // What is in storage is the visitor's own: a broken entry is dropped, not sent.
  storage.set(STASH_KEY, '{oops')
  const fifth = start({ env: fakePage(storage) })
  fifth.report.send()
  assert.deepEqual(fifth.sent, [])
  assert.ok(!storage.has(STASH_KEY))
})

test('without storage, what cannot be sent waits in memory for the next report (the next welcome, at the latest)', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const env = { ...fakePage(), localStorage: undefined }
  const { sent, stats, link } = start({ env })
  link.joined = false
  load(stats, '/img/a.png', 'peer', 100)
  mock.timers.tick(SETTLE_MS)
  assert.equal(sent.length, 0)
  link.join()
  assert.deepEqual(sent.map(noId), [{ type: 'usage', peer: 100, origin: 0, cache: 0, served: 0, assets: [['/img/a.png', 100]] }])
})

test('a stashed report taken by two pages at once (a Firefox navigation: storage is no lock) is sent by one page once, and always with its id', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const storage = new Map()
  // The page being left: its socket closed, its report waits in storage.
  const old = start({ env: fakePage(storage) })
  load(old.stats, '/img/a.png', 'peer', 3_502_698)
  old.link.joined = false
  old.env.fire('visibilitychange')
  const stashed = storage.get(STASH_KEY)
  assert.ok(stashed)

  // The next page takes it as it starts; the page being left read it just before (its own
  // `pagehide` report), failed to send it again, and writes it back after the next page took it.
  const next = start({ env: fakePage(storage) })
  next.link.joined = false
  old.env.fire('pagehide')
  assert.ok(!storage.has(STASH_KEY), 'the old page found nothing: the next page had taken it')
  storage.set(STASH_KEY, stashed)
  next.link.join()
  assert.equal(next.sent.length, 1)
  load(next.stats, '/img/b.png', 'origin', 10)
  mock.timers.tick(SETTLE_MS)
  next.env.fire('pagehide')
  assert.deepEqual(next.sent.map((m) => m.peer), [3_502_698, 0], 'the copy written back is not sent again')
  assert.ok(!storage.has(STASH_KEY))

  // A third page (another tab) that took a copy too sends it with the same id: the coordinator
  // counts an id once (coordinator/test/usage.test.js).
  storage.set(STASH_KEY, stashed)
  const tab = start({ env: fakePage(storage) })
  tab.report.send()
  assert.equal(tab.sent.length, 1)
  assert.equal(tab.sent[0].id, next.sent[0].id)
})

test('more asset paths than one message may name: all of them, in messages of LIMITS.maxUsageAssets', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const { sent, stats } = start()
  const n = LIMITS.maxUsageAssets + 2
  for (let i = 0; i < n; i++) load(stats, `/img/${i}.png`, 'peer', 1000 + i)
  mock.timers.tick(SETTLE_MS)
  assert.equal(sent.length, 2)
  assert.equal(sent[0].assets.length, LIMITS.maxUsageAssets)
  assert.equal(sent[0].peer, n * 1000 + (n - 1) * n / 2, 'the counts go with the first')
  assert.deepEqual(sent[1], { type: 'usage', peer: 0, origin: 0, cache: 0, served: 0, assets: [[`/img/${n - 2}.png`, 1000 + n - 2], [`/img/${n - 1}.png`, 1000 + n - 1]] })
  assert.deepEqual([...sent[0].assets, ...sent[1].assets].map(([path]) => path).sort(), Array.from({ length: n }, (_, i) => `/img/${i}.png`).sort())
})

test('outside a page (a Node host: no events, location nor storage) it reports absolute URLs, and send() is the last report', () => {
  mock.timers.enable({ apis: ['setTimeout'] })
  const { sent, stats, report } = start({ env: {} })
  load(stats, 'https://shop.example/img/a.png', 'peer', 10)
  mock.timers.tick(SETTLE_MS)
  assert.deepEqual(sent, [{ type: 'usage', peer: 10, origin: 0, cache: 0, served: 0, assets: [['/img/a.png', 10]] }])
  stats.served({ hash: 'h', peer: 'p', bytes: 5 })
  report.send()
  assert.equal(sent[1].served, 5)
  // The default env is globalThis, which in Node has none of them either.
  const bareStats = new Stats()
  new UsageReport({ signaling: { send: (msg) => sent.push(msg) > 0 }, stats: bareStats, intervalMs: 1000 }) // eslint-disable-line no-new
  load(bareStats, 'https://shop.example/img/b.png', 'peer', 3)
  mock.timers.tick(SETTLE_MS)
  assert.deepEqual(sent[2].assets, [['/img/b.png', 3]])
  // A path-only URL still names its path.
  load(stats, '/img/c.png', 'peer', 4)
  report.send()
  assert.deepEqual(sent[3].assets, [['/img/c.png', 4]])
})
