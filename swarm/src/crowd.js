/**
 * The crowd: a slice of a real access log replayed through the real system.
 * A coordinator, the replay site (each page view of the log a page embedding
 * the assets its client fetched) at a realistic distance (the delay rules of
 * common/distant-link.js, applied by the site itself so that a download the
 * hedge cancels counts only what left it), and one visitor per
 * log client, who opens each of its page views when its log client did
 * (time compressed by `speedup`), stays on its last page of a session for the
 * simulator's `linger`, and leaves. The busiest log clients are real
 * browsers (browser-visitor.js: Chromium and Firefox in turn), the rest Node
 * peers running the client's own page-side code (node-visitor.js). What is measured comes from
 * the origin's own counter, the coordinator's counters and the visitors'
 * page-load times; what clients say of themselves is only compared with it.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { startCoordinator } from '../../coordinator/src/server.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { startRedisCluster } from '../../test/support/redis-cluster.js'
import { signJoinToken } from '../../coordinator/src/join-token.js'
import { startReplaySite } from './replay-site.js'
import { NodeVisitor, installSite } from './node-visitor.js'
import { BrowserVisitor, launchBrowsers } from './browser-visitor.js'
import { untraversableClient } from './visitor-kinds.js'
import { subjectOf } from '../../coordinator/src/quarantine.js'

/** the join tokens' secret: made per run, known to nobody else */
const SECRET = `crowd-${Math.random().toString(36).slice(2)}-${Date.now()}-secret-of-some-length`

/**
 * @typedef {object} CrowdOptions
 * @property {import('./slice.js').Slice} slice
 * @property {number} [speedup] log seconds per real second
 * @property {number} [rttMs] the origin's added round trip
 * @property {number} [mbps] the origin's bandwidth per response, Mbit/s
 * @property {number} [untraversable] share of visitors behind a NAT nobody can reach
 * @property {number} [seed] which visitors those are (the simulator's rule and seed)
 * @property {boolean} [withScript] false: the same replay without maygh (every byte from the origin)
 * @property {number} [browsers] how many of the busiest clients are real browsers (Chromium and Firefox in turn)
 * @property {string} [clientDir] the built client bundles the site serves (default: the repository's dist/)
 * @property {'memory' | 'redis' | 'cluster'} [store] the coordinators' store: in-process (one coordinator), one Redis, a 6-node Redis Cluster
 * @property {number} [liars] lying visitors added to the log's (corrupt bytes and false misses in turn): each opens one page of
 *   the slice's most asked-for assets as the replay starts (from the origin, as any first view) and stays, holding them, to the end
 * @property {number} [shards] coordinators (on Redis or a Cluster); each visitor's pages list them all and pick one, as the client does
 * @property {Record<string, string>} [clientData] `data-` attributes beyond the coordinator and token (none: the client's defaults)
 * @property {(line: string) => void} [log]
 */

/**
 * @typedef {object} CrowdResult
 * @property {number} wallMs
 * @property {import('./replay-stats.js').ReplayStats} origin the origin's own counter
 * @property {(import('./node-visitor.js').ViewResult & { client: string, path: string })[]} views
 * @property {number} viewBytes the log's HTML bytes of the views served (the replay's own markup beyond them is not the log's)
 * @property {Record<string, number>} coordinator lookups, hits, joins, reports and quarantines, from the coordinator's counters
 * @property {any} usage what the coordinator's `/stats` says of the site's usage (the visitors' own reports)
 * @property {number} visitors
 * @property {string[]} untraversable the visitors behind an untraversable NAT
 * @property {Record<string, string[]>} errorSamples the first few messages of each error code Node visitors met
 * @property {{ liars: string[], quarantined: string[] }} quarantine the lying visitors, and every visitor quarantined by the end
 */

/**
 * @param {CrowdOptions} o
 * @returns {Promise<CrowdResult>}
 */
export async function runCrowd (o) {
  const { slice, speedup = 10, rttMs = 80, mbps = 5, untraversable = 0, seed = 1, withScript = true, browsers = 0, liars = 0, clientDir, clientData = {}, store = 'memory', shards = 1, log = () => {} } = o
  if (store === 'memory' && shards !== 1) throw new TypeError('the in-process store serves one coordinator: use redis or cluster for more shards')
  const redis = store === 'redis' ? await startRedisServer() : store === 'cluster' ? await startRedisCluster() : null
  const coordinators = []
  for (let i = 0; i < shards; i++) {
    coordinators.push(await startCoordinator({ port: 0, stunPort: 0, tokenSecrets: [SECRET], usageFlushMs: 200, logLevel: 'silent', ...(redis && { redisUrl: redis.url }) }))
  }
  const coordinator = coordinators[0]
  const coordinatorUrls = coordinators.map((c) => c.url).join(',')
  /** @type {Map<string, { bytes: number, assets: string[] }>} */
  const views = new Map(slice.views.map((v) => [v.path, { bytes: v.htmlBytes, assets: [...v.assets, ...v.others].map((a) => a.url) }]))
  const lying = withScript ? Array.from({ length: liars }, (_, i) => `liar-${i}`) : []
  const bait = popularAssets(slice, 40)
  for (const liar of lying) views.set(`/_view/${liar}`, { bytes: 0, assets: bait.map((a) => a.url) })
  const site = await startReplaySite({ assets: slice.assets, views, others: slice.others, coordinator: coordinatorUrls, link: { rttMs, mbps }, ...(clientDir && { clientDir }) })
  installSite(site.url)
  const origin = new URL(site.url).origin
  /** @type {Map<string, Promise<unknown>>} each visitor's views, one after another */
  const chains = new Map()
  /** @type {CrowdResult['views']} */
  const results = []
  /** @type {string[]} */
  const stuck = []
  const order = [...slice.clients.keys()]
  // The busiest clients (most page views) browse in real browsers, when the replay has the script.
  const inBrowsers = withScript ? [...slice.clients].sort((a, b) => b[1].length - a[1].length).slice(0, browsers).map(([c]) => c) : []
  const launched = await launchBrowsers(inBrowsers.length)
  /** @type {Map<string, NodeVisitor | BrowserVisitor>} */
  const visitors = new Map()
  const visitorOf = (/** @type {string} */ client) => {
    let v = visitors.get(client)
    if (!v) {
      const blocked = withScript && order.includes(client) && untraversableClient(order.indexOf(client), untraversable, seed)
      if (blocked) stuck.push(client)
      const token = signJoinToken({ origin, visitor: client }, SECRET)
      const b = inBrowsers.indexOf(client)
      v = b !== -1
        ? new BrowserVisitor({ browser: launched[b], site: site.url, name: client, token, untraversable: blocked })
        : new NodeVisitor({ site: site.url, name: client, plain: !withScript, untraversable: blocked, liar: lying.includes(client) ? (lying.indexOf(client) % 2 ? 'miss' : 'corrupt') : undefined, data: { ...clientData, coordinator: coordinatorUrls, token } })
      visitors.set(client, v)
    }
    return v
  }
  let viewBytes = 0
  // The liars take their places first, holding what most visitors will ask for.
  await Promise.all(lying.map(async (liar) => {
    await visitorOf(liar).view(`/_view/${liar}`, bait, [], { cached: true })
    await /** @type {NodeVisitor} */ (visitorOf(liar)).synced()
  }))
  const t0 = performance.now()
  const at = (/** @type {number} */ logTime) => (logTime - slice.start) / speedup * 1000
  try {
    let next = 0
    for (const view of slice.views) {
      const wait = at(view.t) - (performance.now() - t0)
      if (wait > 0) await sleep(wait)
      if (view.id >= next) {
        log(`${((performance.now() - t0) / 1000).toFixed(1)} s: view ${view.id} of ${slice.views.length}, ${visitors.size} visitors`)
        next = view.id + Math.ceil(slice.views.length / 10)
      }
      const visitor = visitorOf(view.client)
      const chain = (chains.get(view.client) ?? Promise.resolve()).then(async () => {
        const cached = view.htmlBytes === 0 && visitor instanceof NodeVisitor
        const r = await visitor.view(view.path, view.assets, view.others, { cached })
        viewBytes += view.htmlBytes
        results.push({ ...r, client: view.client, path: view.path })
        if (view.last) {
          const stay = at(view.leaveAt) - (performance.now() - t0)
          if (stay > 0) await sleep(stay)
          visitor.leave()
        }
      })
      chains.set(view.client, chain.catch(() => {}))
    }
    await Promise.all(chains.values())
    for (const liar of lying) visitorOf(liar).leave()
    // The last reports reach the store at the coordinator's next flush.
    await sleep(600)
    const stats = await (await fetch(`${coordinator.httpUrl}/stats`)).json()
    const metrics = await Promise.all(coordinators.map(async (c) => (await fetch(`${c.httpUrl}/metrics`)).text()))
    return {
      wallMs: performance.now() - t0,
      origin: site.stats(),
      views: results,
      viewBytes,
      coordinator: coordinatorCounts(coordinators, metrics),
      usage: stats.usage,
      visitors: visitors.size,
      untraversable: stuck,
      errorSamples: samplesOf([...visitors.values()]),
      quarantine: { liars: lying, quarantined: await quarantinedOf(coordinator, [...visitors.keys()]) }
    }
  } finally {
    await Promise.all([...visitors.values()].map((v) => v.close()))
    await Promise.all(launched.map((b) => b.close()))
    await site.close()
    for (const c of coordinators) await c.close()
    await redis?.close()
  }
}

/**
 * The slice's assets most page views ask for, media aside (few pages ask for any).
 * @param {import('./slice.js').Slice} slice
 * @param {number} n
 */
function popularAssets (slice, n) {
  /** @type {Map<string, { url: string, bytes: number, media: boolean, count: number }>} */
  const counts = new Map()
  for (const v of slice.views) {
    for (const a of v.assets) {
      if (a.media) continue
      const c = counts.get(a.url) ?? { ...a, count: 0 }
      c.count++
      counts.set(a.url, c)
    }
  }
  return [...counts.values()].sort((a, b) => b.count - a.count).slice(0, n)
}

/**
 * The visitors the coordinators' store holds in quarantine (each visitor is its join token's).
 * @param {import('../../coordinator/src/server.js').Coordinator} coordinator
 * @param {string[]} names
 */
async function quarantinedOf (coordinator, names) {
  const held = await Promise.all(names.map((n) => coordinator.store.isQuarantined(subjectOf('visitor', n))))
  return names.filter((_, i) => held[i])
}

/**
 * @param {(NodeVisitor | BrowserVisitor)[]} visitors
 * @returns {Record<string, string[]>}
 */
function samplesOf (visitors) {
  /** @type {Record<string, string[]>} */
  const all = {}
  for (const v of visitors) {
    for (const [code, messages] of Object.entries(v.samples)) {
      const seen = (all[code] ??= [])
      for (const m of messages) if (seen.length < 5 && !seen.includes(m)) seen.push(m)
    }
  }
  return all
}

/**
 * What the coordinators counted, summed over the shards.
 * @param {import('../../coordinator/src/server.js').Coordinator[]} coordinators
 * @param {string[]} metrics their /metrics texts
 * @returns {Record<string, number>}
 */
function coordinatorCounts (coordinators, metrics) {
  const metric = (/** @type {string} */ name) => {
    let sum = 0
    for (const text of metrics) for (const m of text.matchAll(new RegExp(`^${name.replace(/[{}]/g, '\\$&')}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1])
    return sum
  }
  const reasons = Object.fromEntries(['hash_mismatch', 'miss', 'no_channel', 'stall'].map((r) => [`reports_${r}`, metric(`maygh_reports_total{reason="${r}"}`)]))
  return {
    lookups: coordinators.reduce((n, c) => n + c.counters.lookups, 0),
    lookupHits: coordinators.reduce((n, c) => n + c.counters.lookupHits, 0),
    joins: metric('maygh_messages_total{type="join"}'),
    ...reasons,
    quarantines: metric('maygh_quarantines_total')
  }
}
