/**
 * The coordinator tier end to end in real browsers: several coordinator shards
 * on one Redis Cluster, visitors on different shards sharing images, and a
 * shard killed mid-visit. (Rolling restarts and Redis restarted empty:
 * coordinator-tier-restarts.test.js.)
 *
 * Visitors are contexts of one browser per engine; each is put on the
 * coordinator a scenario names by rewriting its page's data-coordinator
 * (test/support/shop-visitors.js).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { launchBrowser, originImageBytes, probeCoordinator, until } from '../support/browsers.js'
import { startMayghCompose } from '../support/compose-topology.js'
import { startTier } from '../support/coordinator-tier.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { assertEveryImageShows, imageBytes, openShopVisitor } from '../support/shop-visitors.js'

/** share of the image bytes a visitor must get from peers when a holder is online (as test/e2e/peer-share.test.js) */
const PEER_SHARE = 0.9
/** a client whose coordinator died is joined on another one within this long (docs/protocol.md: about half a second) */
const REJOIN_MS = 5000

describe('docker-compose.yml as local processes: a visit across shards', () => {
  /** @type {Awaited<ReturnType<typeof startMayghCompose>>} */
  let compose
  /** @type {import('playwright-core').Browser} */
  let chromium
  /** @type {import('playwright-core').Browser} */
  let firefox
  before(async () => {
    compose = await startMayghCompose()
    chromium = await launchBrowser('chromium')
    firefox = await launchBrowser('firefox')
  }, { timeout: 120000 })
  after(async () => {
    await chromium?.close()
    await firefox?.close()
    await compose?.close()
  })

  // (Locally, a coordinator's listening URL and its PUBLIC_URL translate to the
  // same address, so this cannot tell whether compose sets PUBLIC_URL; it checks
  // that every shard sees the others live and hands out where browsers reach them.)
  test('each coordinator names the other two as alternates, at the URLs browsers reach them at', { timeout: 60000 }, async () => {
    for (const c of compose.coordinators) {
      const others = compose.coordinators.filter((o) => o !== c).map((o) => o.url).sort()
      // The others' entries arrive with the registry's beats (every second).
      let alternates = []
      for (const deadline = Date.now() + 10000; Date.now() < deadline; await sleep(200)) {
        const probe = await probeCoordinator(c.url)
        probe.close()
        alternates = [...probe.alternates].sort()
        if (JSON.stringify(alternates) === JSON.stringify(others)) break
      }
      assert.deepEqual(alternates, others, `${c.service}'s alternates`)
    }
  })

  test('A (Chromium) on coordinator-1 loads the shop; B (Firefox) on coordinator-3 then gets A\'s images from A', { timeout: 120000 }, async () => {
    const [first, , third] = compose.coordinators
    const manifest = await (await fetch(`${compose.demoUrl}/maygh-manifest.json`)).json()
    const originStats = async () => (await fetch(`${compose.demoUrl}/origin-stats`)).json()
    const coordinatorStats = async (/** @type {{ httpUrl: string }} */ c) => (await fetch(`${c.httpUrl}/stats`)).json()

    const a = await openShopVisitor(chromium, compose.demoUrl + '/elements', [first.url])
    const { images: imgsA, stats: sa } = await assertEveryImageShows(a, 'A')
    assert.equal(sa.coordinator.url, first.url, 'A joined coordinator-1')
    assert.ok(sa.peerId.startsWith(`${first.shardId}.`), `A's id ${sa.peerId} names coordinator-1's shard`)
    assert.equal(sa.peer.count, 0, 'A, the first visitor, got nothing from peers')
    assert.ok(sa.held >= imgsA.length, `coordinator-1 acknowledged A's images (held ${sa.held})`)
    const total = imageBytes(imgsA, manifest)

    const origin = originImageBytes(await originStats())
    const forwarded = (await coordinatorStats(third)).forwarded
    const b = await openShopVisitor(firefox, compose.demoUrl + '/elements', [third.url])
    const { images: imgsB, stats: sb } = await assertEveryImageShows(b, 'B')
    assert.equal(imgsB.length, imgsA.length)
    assert.equal(sb.coordinator.url, third.url, 'B joined coordinator-3')
    assert.ok(sb.peerId.startsWith(`${third.shardId}.`), `B's id ${sb.peerId} names coordinator-3's shard`)
    assert.equal(sb.rejected, 0, 'nothing rejected')
    assert.ok(sb.peer.bytes >= PEER_SHARE * total, `B got ${sb.peer.bytes} of ${total} image bytes from peers`)
    const fetched = originImageBytes(await originStats()).requests - origin.requests
    assert.ok(fetched <= (1 - PEER_SHARE) * imgsB.length, `B fetched ${fetched} images from the origin`)
    assert.equal((await a.stats()).served.bytes, sb.peer.bytes, 'what A served is what B received')
    assert.ok((await coordinatorStats(third)).forwarded > forwarded, 'B\'s signals to A crossed shards over the store\'s bus')
    await Promise.all([a.close(), b.close()])
  })
})

/**
 * Runs in a page: notes the first moment (Date.now(), the test's clock too) the
 * client is joined to a coordinator other than `from`, sampling every 10 ms.
 * @param {string} from
 */
function watchRejoin (from) {
  const w = /** @type {any} */ (globalThis)
  const timer = setInterval(() => {
    const s = w.Maygh?.stats()
    if (s?.joined && s.coordinator.url !== from) {
      w.coordinatorTierRejoinedAt = Date.now()
      clearInterval(timer)
    }
  }, 10)
}

describe('three coordinator processes on a Redis Cluster: one SIGKILLed mid-visit', () => {
  /** @type {Awaited<ReturnType<typeof startRedisCluster>>} */
  let cluster
  /** @type {Awaited<ReturnType<typeof startTier>>} */
  let tier
  /** @type {import('playwright-core').Browser} */
  let browser
  before(async () => {
    cluster = await startRedisCluster()
    tier = await startTier({ redisUrl: cluster.url, count: 3 })
    browser = await launchBrowser('chromium')
  }, { timeout: 120000 })
  after(async () => {
    await browser?.close()
    await tier?.close()
    await cluster?.close()
  })

  test('every image still shows, both clients rejoin elsewhere within 5 s, and their holdings serve a third visitor', { timeout: 120000 }, async (t) => {
    const [first, , third] = tier.coordinators
    const a = await openShopVisitor(browser, tier.shop.url, [first.url])
    const { images: imgsA, stats: sa } = await assertEveryImageShows(a, 'A')
    assert.equal(sa.coordinator.url, first.url)
    const total = imageBytes(imgsA, tier.manifest)
    await a.page.evaluate(watchRejoin, first.url)

    // B, also on coordinator-1, starts loading; coordinator-1 is SIGKILLed as
    // B sends its first lookup, so B's loads meet a coordinator dying under
    // them: lookups in flight and the half-signalled connection to A fail at
    // once, and those loads go on to the origin. (The page's WebSocket.send is
    // watched, not changed: every frame still goes out.)
    /** @type {{ at: number, exit: Promise<import('../support/coordinator-process.js').Exit> | null }} */
    const kill = { at: 0, exit: null }
    const b = await openShopVisitor(browser, tier.shop.url, [first.url], {
      visit: false,
      init: async (page) => {
        await page.exposeFunction('coordinatorTierKill', () => {
          if (kill.exit !== null) return
          kill.at = Date.now()
          kill.exit = first.stop('SIGKILL')
        })
        await page.addInitScript(() => {
          const w = /** @type {any} */ (globalThis)
          /** @type {{ source: string, t: number }[]} */
          w.coordinatorTierLoads = []
          w.coordinatorTierKilledAt = Infinity
          const send = WebSocket.prototype.send
          WebSocket.prototype.send = function (/** @type {any} */ data) {
            if (w.coordinatorTierKilledAt === Infinity && typeof data === 'string' && data.includes('"type":"lookup"')) {
              w.coordinatorTierKilledAt = null
              w.coordinatorTierKill().then(() => { w.coordinatorTierKilledAt = performance.now() })
            }
            return send.call(this, data)
          }
          w.addEventListener('DOMContentLoaded', () => {
            w.Maygh.on('load', (/** @type {{ source: string }} */ e) => w.coordinatorTierLoads.push({ source: e.source, t: performance.now() }))
          })
        })
        await page.addInitScript(watchRejoin, first.url)
      }
    })
    await b.visit()
    assert.ok(kill.exit !== null, 'B looked an image up, and coordinator-1 was killed then')
    assert.equal((await kill.exit).signal, 'SIGKILL')
    const { images: imgsB, stats: sb } = await assertEveryImageShows(b, 'B')
    assert.equal(imgsB.length, imgsA.length)
    const loads = await b.page.evaluate(() => {
      const w = /** @type {any} */ (globalThis)
      const after = w.coordinatorTierLoads.filter((/** @type {{ t: number }} */ l) => l.t > w.coordinatorTierKilledAt)
      return { total: w.coordinatorTierLoads.length, afterKill: after.length }
    })
    t.diagnostic(`B: ${loads.total} loads, ${loads.afterKill} finished after the kill; ${sb.peer.count} from peers, ${sb.origin.count} from the origin; errors ${JSON.stringify(sb.errors)}`)

    // Both of coordinator-1's clients are joined on another coordinator within 5 s of the kill.
    for (const [i, v] of [a, b].entries()) {
      const who = 'AB'[i]
      const at = await until(() => v.page.evaluate(() => /** @type {any} */ (globalThis).coordinatorTierRejoinedAt))
      const { coordinator } = await v.stats()
      t.diagnostic(`${who} joined ${coordinator.url} ${at - kill.at} ms after the kill`)
      assert.ok(at - kill.at <= REJOIN_MS, `${who} rejoined ${at - kill.at} ms after the kill`)
      assert.ok(tier.coordinators.some((c) => c !== first && c.url === coordinator.url), `${who} is on a live coordinator`)
      assert.equal(coordinator.switches, 1)
    }

    // Their holdings are listed again under their new ids; a third visitor on a
    // live coordinator gets its images from them. First wait until lookups no
    // longer hand out the dead shard's peers (SHARD_TTL_MS after its last beat):
    // until then a visitor may pick A's old id and wait out a connect timeout.
    const ids = await Promise.all([a, b].map(async (v) => (await v.stats()).peerId))
    const probe = await probeCoordinator(third.url)
    try {
      const hash = tier.manifest.assets[imgsA[0].url].hash
      await until(async () => {
        const holders = await probe.holders(hash)
        return holders.some((h) => ids.includes(h)) && !holders.some((h) => h.startsWith(`${first.shard}~`))
      })
      t.diagnostic(`lookups stopped handing out coordinator-1's peers ${Date.now() - kill.at} ms after the kill`)
    } finally {
      probe.close()
    }
    const served = (await a.stats()).served.bytes + (await b.stats()).served.bytes
    const c = await openShopVisitor(browser, tier.shop.url, [third.url])
    const { stats: sc } = await assertEveryImageShows(c, 'C')
    assert.equal(sc.coordinator.url, third.url)
    assert.ok(sc.peer.bytes >= PEER_SHARE * total, `C got ${sc.peer.bytes} of ${total} image bytes from peers`)
    const servedNow = (await a.stats()).served.bytes + (await b.stats()).served.bytes
    assert.equal(servedNow - served, sc.peer.bytes, 'C\'s peer bytes came from A and B')
    await Promise.all([a, b, c].map((v) => v.close()))
  })
})
