/**
 * The page's byte reports (usage-report.js): what a `usage` message says, when
 * one goes out, and what waits when it cannot.
 */
import { test, mock } from 'node:test'
import assert from 'node:assert/strict'
import { Stats } from '../src/stats.js'
import { UsageReport } from '../src/usage-report.js'
import { LIMITS } from '../../protocol/index.js'

test('every interval and when the page is hidden, what is new since the last report; nothing while nothing is; what cannot be sent waits', () => {
  mock.timers.enable({ apis: ['setInterval'] })
  /** @type {Record<string, (() => void)[]>} */
  const listeners = {}
  const page = { visibilityState: 'visible' }
  Object.assign(globalThis, {
    location: new URL('https://shop.example/products'),
    document: page,
    addEventListener: (/** @type {string} */ type, /** @type {() => void} */ fn) => { (listeners[type] ??= []).push(fn) }
  })
  try {
    /** @type {any[]} */
    const sent = []
    let joined = true
    const stats = new Stats()
    new UsageReport({ signaling: { send: (msg) => joined && sent.push(msg) > 0 }, stats, intervalMs: 10_000 }) // eslint-disable-line no-new
    mock.timers.tick(10_000)
    assert.equal(sent.length, 0, 'nothing new, nothing sent')

    stats.loaded({ url: '/img/a.png', hash: 'h1', source: 'peer', bytes: 5000, ms: 1 })
    stats.loaded({ url: 'https://shop.example/img/b.png', hash: 'h2', source: 'peer', bytes: 7000, ms: 1 })
    stats.loaded({ url: '/img/c.png', hash: 'h3', source: 'origin', bytes: 3000, ms: 1 })
    stats.loaded({ url: '/img/a.png', hash: 'h1', source: 'cache', bytes: 5000, ms: 1 })
    stats.served({ hash: 'h1', peer: 'p', bytes: 5000 })
    mock.timers.tick(10_000)
    assert.deepEqual(sent, [{ type: 'usage', peer: 12000, origin: 3000, cache: 5000, served: 5000, assets: [['/img/b.png', 7000], ['/img/a.png', 5000]] }])

    // Not joined: kept, and sent with what comes next once it can be.
    joined = false
    stats.loaded({ url: '/img/a.png', hash: 'h1', source: 'peer', bytes: 100, ms: 1 })
    mock.timers.tick(10_000)
    assert.equal(sent.length, 1)
    joined = true
    stats.served({ hash: 'h1', peer: 'p', bytes: 50 })
    page.visibilityState = 'hidden'
    for (const fn of listeners.visibilitychange) fn()
    assert.deepEqual(sent[1], { type: 'usage', peer: 100, origin: 0, cache: 0, served: 50, assets: [['/img/a.png', 100]] })

    // More asset paths than one report may name: the largest go first, the rest next time.
    for (let i = 0; i < LIMITS.maxUsageAssets + 2; i++) stats.loaded({ url: `/img/${i}.png`, hash: `h${i}`, source: 'peer', bytes: 1000 + i, ms: 1 })
    mock.timers.tick(10_000)
    assert.equal(sent[2].assets.length, LIMITS.maxUsageAssets)
    assert.deepEqual(sent[2].assets[0], [`/img/${LIMITS.maxUsageAssets + 1}.png`, 1000 + LIMITS.maxUsageAssets + 1])
    mock.timers.tick(10_000)
    assert.deepEqual(sent[3], { type: 'usage', peer: 0, origin: 0, cache: 0, served: 0, assets: [['/img/1.png', 1001], ['/img/0.png', 1000]] })
  } finally {
    mock.timers.reset()
    for (const key of ['location', 'document', 'addEventListener']) delete (/** @type {any} */ (globalThis))[key]
  }
})
