/**
 * The coordinator tier restarted under real browsers: a rolling restart of
 * every coordinator while visitors keep loading the shop, and the store (one
 * Redis) restarted empty under a holder that never reloads. (Visits across
 * shards and a coordinator killed mid-visit: coordinator-tier.test.js.)
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { launchBrowser, probeCoordinator, until } from '../support/browsers.js'
import { startTier } from '../support/coordinator-tier.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { startRedisServer } from '../support/redis-server.js'
import { assertEveryImageShows, imageBytes, openShopVisitor, recordCoordinatorTimeline } from '../support/shop-visitors.js'

/** share of the image bytes a visitor must get from peers when a holder is online (as test/e2e/peer-share.test.js) */
const PEER_SHARE = 0.9
/**
 * A client told to move joins another coordinator at once: never unjoined
 * longer than this (a generous bound). Known to be exceeded now and then: a
 * client sent away by all three within signaling.js's STALE_MS has every URL
 * barred, and pick() then chooses at random among all of them, the draining
 * one included, with backoff in between (the failure message shows the
 * client's connection timeline).
 */
const MOVE_GAP_MS = 2000
/** after Redis comes back empty, the coordinators list their peers again within this long (a generous bound) */
const RELIST_MS = 10000

/** @type {import('playwright-core').Browser} */
let browser
before(async () => { browser = await launchBrowser('chromium') })
after(async () => { await browser?.close() })

describe('three coordinator processes on a Redis Cluster: a rolling restart', () => {
  /** @type {Awaited<ReturnType<typeof startRedisCluster>>} */
  let cluster
  /** @type {Awaited<ReturnType<typeof startTier>>} */
  let tier
  before(async () => {
    cluster = await startRedisCluster()
    tier = await startTier({ redisUrl: cluster.url, count: 3, env: { DRAIN_WINDOW_MS: '2000' } })
  }, { timeout: 120000 })
  after(async () => {
    await tier?.close()
    await cluster?.close()
  })

  test('SIGTERM, exit, start again, one at a time, while visitors load pages: zero failed loads, clients moved', { timeout: 180000 }, async (t) => {
    const [first, , third] = tier.coordinators
    const everyUrl = tier.coordinators.map((c) => c.url)
    const shop = tier.shop.url
    const tally = { pages: 0, images: 0, peerBytes: 0, originBytes: 0, freshJoined: 0, joinedTo: new Set() }
    /** @param {import('../support/shop-visitors.js').ShopVisitor} v @param {string} who */
    const check = async (v, who) => {
      const { images, stats } = await assertEveryImageShows(v, who)
      if (stats.coordinator.url !== null) tally.joinedTo.add(stats.coordinator.url)
      tally.pages++
      tally.images += images.length
      tally.peerBytes += stats.peer.bytes
      tally.originBytes += stats.origin.bytes
      return stats
    }

    // Two residents stay on their first page through the whole restart, put on
    // coordinator-1 and coordinator-3 (each named alone: the client learns the
    // others from `alternates`). Every 100 ms: are they joined?
    const watched = { init: async (/** @type {import('playwright-core').Page} */ page) => { await page.addInitScript(recordCoordinatorTimeline) } }
    const residents = [await openShopVisitor(browser, shop, [first.url], watched), await openShopVisitor(browser, shop, [third.url], watched)]
    for (const [i, r] of residents.entries()) await assertEveryImageShows(r, `resident ${i + 1}`)
    const gaps = residents.map(() => ({ since: 0, longestMs: 0, samples: 0, unjoined: 0 }))
    const watch = { on: true }
    const watcher = (async () => {
      while (watch.on) {
        for (const [i, r] of residents.entries()) {
          const { joined } = await r.stats()
          const g = gaps[i]
          const now = Date.now()
          g.samples++
          if (joined) g.since = 0
          else {
            g.unjoined++
            g.since ||= now
            g.longestMs = Math.max(g.longestMs, now - g.since)
          }
        }
        await sleep(100)
      }
    })()
    watcher.catch(() => {}) // a failure ends the test first; the browser's close then ends this loop

    // Visitors keep coming until the restart is over (two visits each at least): two
    // long-lived pages reloading (their page names all three coordinators), and
    // fresh contexts one after another (odd ones name all three, even ones only
    // coordinator-1, as the shop's own page does).
    const phase = { restarting: true }
    /** @param {number} n */
    const reloading = async (n) => {
      const v = await openShopVisitor(browser, shop, everyUrl, { visit: false })
      let rounds = 0
      try {
        do {
          await v.visit()
          await check(v, `reloading page ${n}, visit ${++rounds}`)
        } while (phase.restarting || rounds < 2)
      } finally {
        await v.close()
      }
      return rounds
    }
    const fresh = async () => {
      let n = 0
      do {
        n++
        const v = await openShopVisitor(browser, shop, n % 2 ? everyUrl : [first.url])
        try {
          if ((await check(v, `fresh visitor ${n}`)).joined) tally.freshJoined++
        } finally {
          await v.close()
        }
      } while (phase.restarting || n < 2)
      return n
    }
    const loops = Promise.all([reloading(1), reloading(2), fresh()])
    loops.catch(() => { phase.restarting = false })

    /** @type {import('../support/coordinator-process.js').Exit[]} */
    const exits = []
    const started = Date.now()
    try {
      // Let every loop be under way first.
      await Promise.race([until(async () => tally.pages >= 3), loops])
      for (const c of tier.coordinators) {
        exits.push(await c.stop('SIGTERM'))
        await c.start() // same port; resolves on /readyz 200
      }
    } finally {
      phase.restarting = false
    }
    const restartMs = Date.now() - started
    let reloadsA, reloadsB, freshVisits
    try {
      [reloadsA, reloadsB, freshVisits] = await loops
    } finally {
      watch.on = false
    }
    await watcher

    for (const [i, exit] of exits.entries()) assert.deepEqual(exit, { code: 0, signal: null }, `coordinator-${i + 1} drained and exited cleanly`)
    const residentStats = await Promise.all(residents.map(async (r, i) => (await assertEveryImageShows(r, `resident ${i + 1} at the end`)).stats))
    for (const [i, s] of residentStats.entries()) {
      const who = `resident ${i + 1}`
      t.diagnostic(`${who}: ${s.coordinator.switches} switches, now on ${s.coordinator.url}; unjoined in ${gaps[i].unjoined} of ${gaps[i].samples} samples, longest ${gaps[i].longestMs} ms`)
      assert.ok(s.joined && everyUrl.includes(s.coordinator.url), `${who} is joined at the end`)
      assert.ok(s.coordinator.switches >= 1, `${who} was moved (${s.coordinator.switches} switches)`)
      const timeline = async () => `coordinators at ports ${tier.coordinators.map((c) => c.port).join(', ')}; ${who}'s connections:\n${(await residents[i].page.evaluate(() => /** @type {any} */ (globalThis).mayghTestTimeline)).join('\n')}`
      assert.ok(gaps[i].longestMs <= MOVE_GAP_MS, `${who} was unjoined for ${gaps[i].longestMs} ms at a stretch; ${await timeline()}`)
    }
    t.diagnostic(`restart ${restartMs} ms; ${tally.pages} pages (${reloadsA} + ${reloadsB} by the reloading pages, ${freshVisits} fresh visitors, ${tally.freshJoined} of them joined by idle), ${tally.images} images, every one shown; image bytes from peers ${tally.peerBytes}, from the origin ${tally.originBytes}; pages joined ${tally.joinedTo.size} different coordinators`)
    assert.ok(tally.peerBytes > 0, 'peers kept serving during the restart')
    await Promise.all(residents.map((r) => r.close()))
  })
})

describe('two coordinator processes on one Redis, restarted empty', () => {
  /** @type {Awaited<ReturnType<typeof startRedisServer>>} */
  let redis
  /** @type {Awaited<ReturnType<typeof startTier>>} */
  let tier
  before(async () => {
    redis = await startRedisServer()
    tier = await startTier({ redisUrl: redis.url, count: 2 })
  }, { timeout: 60000 })
  after(async () => {
    await tier?.close()
    await redis?.close()
  })

  test('the holder never reloads; a later visitor gets the images from it within seconds', { timeout: 120000 }, async (t) => {
    const [first, second] = tier.coordinators
    const a = await openShopVisitor(browser, tier.shop.url, [first.url])
    const { images, stats: sa } = await assertEveryImageShows(a, 'A')
    const total = imageBytes(images, tier.manifest)
    const hash = tier.manifest.assets[images[0].url].hash
    const probe = await probeCoordinator(second.url)
    try {
      assert.deepEqual(await probe.holders(hash), [sa.peerId], 'A is listed before')

      const port = redis.port
      await redis.close() // SIGKILL: everything it held is gone
      redis = await startRedisServer({ port }) // a fresh, empty server on the same port
      const back = Date.now()
      await until(async () => (await probe.holders(hash)).includes(sa.peerId))
      const relistMs = Date.now() - back
      t.diagnostic(`A listed again ${relistMs} ms after Redis came back empty`)
      assert.ok(relistMs <= RELIST_MS, `A listed again after ${relistMs} ms`)
    } finally {
      probe.close()
    }

    const c = await openShopVisitor(browser, tier.shop.url, [second.url])
    const { stats: sc } = await assertEveryImageShows(c, 'C')
    assert.ok(sc.peer.bytes >= PEER_SHARE * total, `C got ${sc.peer.bytes} of ${total} image bytes from peers`)
    const sa2 = await a.stats()
    assert.equal(sa2.served.bytes, sc.peer.bytes, 'from A')
    assert.deepEqual([sa2.peerId, sa2.joined, sa2.coordinator.switches], [sa.peerId, true, 0], 'A never left its coordinator or joined again: the coordinator listed it by itself')
    await Promise.all([a.close(), c.close()])
  })
})
