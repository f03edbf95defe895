/**
 * What visitors report about their asset bytes (`usage`: from peers, from the
 * origin, from their own store, and served to peers), summed per site — the
 * page's origin, as its socket's `Origin` header said — on this shard, and
 * added to the store in one batch per site every `usageFlushMs`, so that every
 * shard's `/stats`, `/usage`, `/metrics` and dashboard read the same sums.
 *
 * The figures are what visitors say: each count is bounded per message
 * (handlers/usage.js `validate`), and a quarantined visitor's are not counted.
 * A report with an `id` (one a page could not send at once and kept in the
 * visitor's storage, where two pages may each take it) is counted the first
 * time the site's id reaches any shard within USAGE_ID_MS (the store keeps
 * the ids), not again. What a
 * flush fails to write stays pending for the next one; at most `maxUsageSites`
 * sites, and USAGE_ASSETS_KEPT paths per site, wait at once. Read back by
 * {@link siteTotals} and the `/stats` and `/usage` routes (http-routes.js).
 */
import { USAGE_SOURCES } from '../../protocol/index.js'
import { USAGE_ASSETS_KEPT, noUsage } from './store/store.js'

/** @typedef {import('./store/store.js').UsageCounts} UsageCounts */

/**
 * @param {UsageCounts} counts
 * @returns {number} the share of asset bytes fetched over the network that came from peers (0 when none)
 */
export const peerShare = (counts) => counts.peer + counts.origin > 0 ? Math.round(counts.peer / (counts.peer + counts.origin) * 10000) / 10000 : 0

/**
 * Every site's usage totals, from the store (every shard's visitors').
 * @param {Pick<import('./store/store.js').Store, 'usageSites' | 'siteUsage'>} store
 * @returns {Promise<[string, UsageCounts][]>}
 */
export async function siteTotals (store) {
  const sites = await store.usageSites()
  return Promise.all(sites.map(async (site) => /** @type {[string, UsageCounts]} */ ([site, (await store.siteUsage(site, Date.now(), 0)).total])))
}

/**
 * How long a site remembers a report's id: two pages send the same stashed
 * report within seconds of each other (a navigation, two tabs); an hour is
 * room to spare, and what the store keeps is one short key per id.
 */
export const USAGE_ID_MS = 3_600_000

/**
 * A socket's reports checked by id at most (each id is a key the store keeps
 * USAGE_ID_MS): a page sends one for each earlier page that could not report,
 * rarely more than a couple. Past them its reports count as if they had no id,
 * so a scripted client cannot fill the store with ids (what it says it
 * counted it can inflate anyway: README, "Security model").
 */
export const USAGE_IDS_PER_SOCKET = 16

export class UsageTally {
  /**
   * @param {object} o
   * @param {import('./store/store.js').Store} o.store
   * @param {Readonly<import('./config.js').Config>} o.config
   * @param {() => number} o.clock ms since the epoch
   * @param {import('./metrics.js').Metrics} o.metrics
   * @param {(err: Error, context: string) => void} o.warn
   */
  constructor (o) {
    this.o = o
    /** @type {Map<string, { counts: UsageCounts, assets: Map<string, number> }>} site → what waits for the next flush */
    this.pending = new Map()
    /** @type {ReturnType<typeof setInterval> | undefined} */
    this.timer = undefined
    /** @type {Promise<void>} the flush in progress */
    this.flushing = Promise.resolve()
  }

  start () {
    this.timer = setInterval(() => { this.flush() }, this.o.config.usageFlushMs)
    this.timer.unref()
  }

  /** Stop the timer and write what is pending. */
  async stop () {
    clearInterval(this.timer)
    await this.flush()
  }

  /**
   * One visitor's report; one with an `id` only the first time the site hears it.
   * Should the store not answer whether it is the first, the report is counted.
   * @param {string} site the page's origin
   * @param {Record<string, unknown>} message a validated `usage`
   * @returns {Promise<void> | void} resolves once counted (at once without an `id`)
   */
  add (site, message) {
    if (message.id === undefined) return this.#count(site, message)
    return this.o.store.claimUsage(site, /** @type {string} */ (message.id), USAGE_ID_MS).then(
      (first) => first ? this.#count(site, message) : this.o.metrics.usageRepeats.inc(),
      (err) => { this.o.warn(err, `usage id of ${site} not checked; counted`); this.#count(site, message) })
  }

  /**
   * @param {string} site
   * @param {Record<string, unknown>} message
   */
  #count (site, message) {
    const counts = noUsage()
    for (const source of USAGE_SOURCES) {
      counts[source] = /** @type {number} */ (message[source] ?? 0)
      this.o.metrics.usageBytes[source].inc(counts[source])
    }
    this.#merge(site, counts, /** @type {[string, number][]} */ (message.assets ?? []))
  }

  /**
   * Add to what waits for `site`'s next flush.
   * @param {string} site
   * @param {UsageCounts} counts
   * @param {Iterable<[string, number]>} assets
   */
  #merge (site, counts, assets) {
    let p = this.pending.get(site)
    if (!p) {
      if (this.pending.size >= this.o.config.maxUsageSites) return
      this.pending.set(site, (p = { counts: noUsage(), assets: new Map() }))
    }
    for (const source of USAGE_SOURCES) p.counts[source] += counts[source]
    for (const [path, bytes] of assets) {
      if (p.assets.has(path) || p.assets.size < USAGE_ASSETS_KEPT) p.assets.set(path, (p.assets.get(path) ?? 0) + bytes)
    }
  }

  /** Write what is pending, one batch per site; one flush at a time. */
  flush () {
    this.flushing = this.flushing.then(async () => {
      const batch = [...this.pending]
      this.pending.clear()
      const { store, config, clock, warn } = this.o
      const at = clock()
      await Promise.all(batch.map(async ([site, p]) => {
        try {
          await store.addUsage(site, at, p.counts, [...p.assets], { historyMs: config.usageHistoryMs, maxSites: config.maxUsageSites })
        } catch (err) {
          warn(/** @type {Error} */ (err), `usage of ${site} not stored; kept for the next flush`)
          this.#merge(site, p.counts, p.assets)
        }
      }))
    })
    return this.flushing
  }
}
