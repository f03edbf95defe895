/**
 * The page's byte reports to the coordinator (`usage`), which sums them per
 * site for its `/stats`, `/metrics` and dashboard: the asset bytes it got
 * from peers, from the origin and from its own store and the bytes it served
 * since its last report, with the peer bytes per asset path (in messages of
 * at most LIMITS.maxUsageAssets paths).
 *
 * When: SETTLE_MS after the last byte counted (a page's loads come in a
 * burst; one left a second after its last load has reported it), at the
 * latest `intervalMs` (`data-usage-ms`) after the first unreported byte while
 * more keep coming (so at most one report per SETTLE_MS), and at once when the
 * page is hidden or shown (`visibilitychange`), goes away (`pagehide`, or
 * the host's `send()`) or joins a coordinator (`welcome`). Nothing is sent
 * while nothing is new.
 *
 * What cannot be sent (not joined yet, or the socket already closed: Firefox
 * closes a page's WebSocket as it starts to navigate away, before `pagehide`)
 * waits in localStorage (STASH_KEY) as the messages it would have been, each
 * with a random `id`, and the next report of any page of the site takes them:
 * the visitor's next page reports what the last one could not. Without
 * storage they wait in memory for this page's next report.
 *
 * Storage is no lock: a page leaving while the next one starts (both run at
 * once in a Firefox navigation), or two tabs, can each take the same stashed
 * message, and one may write it back after the other took it. So a stashed
 * message keeps its `id` wherever it goes, and the coordinator counts an id
 * once per site (for USAGE_ID_MS, coordinator/src/usage.js), whichever page
 * sends it and however often.
 */
import { LIMITS, USAGE_SOURCES } from '../../protocol/index.js'

/** how long after the last counted byte a report goes out */
export const SETTLE_MS = 1000
/** localStorage key of the counts a page could not send */
export const STASH_KEY = 'maygh-usage'

/** @returns {string} a stashed report's id */
const newId = () => Math.random().toString(36).slice(2)

/** @returns {Record<string, number>} nothing counted yet, by source */
const zero = () => Object.fromEntries(USAGE_SOURCES.map((s) => [s, 0]))

/**
 * Where the page's events and storage come from: a browser page's globals by
 * default; a host running the page code elsewhere (Node peers) gives what it has.
 * @typedef {{ addEventListener?: Function, location?: { href: string }, localStorage?: Storage }} UsageEnv
 */

export class UsageReport {
  /** @type {{ send: (msg: object) => boolean }} */
  #signaling
  /** @type {number} */
  #intervalMs
  /** @type {UsageEnv} */
  #env
  /** bytes by source since the last report */
  #counts = zero()
  /** @type {Map<string, number>} asset path → peer bytes since the last report */
  #assets = new Map()
  /** @type {ReturnType<typeof setTimeout> | undefined} the report SETTLE_MS after the last count */
  #settle
  /** @type {ReturnType<typeof setTimeout> | undefined} the report intervalMs after the first unreported count */
  #deadline
  /** @type {Map<string, Record<string, unknown>>} id → a report that could not be sent yet (this page's or an earlier one's) */
  #unsent = new Map()

  /**
   * @param {object} o
   * @param {{ send: (msg: object) => boolean, on?: (type: string, fn: Function) => unknown }} o.signaling
   *   (`welcome`, on each join: what waits goes then)
   * @param {import('./stats.js').Stats} o.stats
   * @param {number} o.intervalMs the longest a counted byte waits while more keep coming
   * @param {UsageEnv} [o.env] each optional: `addEventListener` (`visibilitychange`,
   *   `pagehide`); `location` (resolves relative asset URLs: absolute ones need none);
   *   `localStorage` (what could not be sent). Without any, reports go on settling,
   *   on `welcome` and on `send()`.
   */
  constructor ({ signaling, stats, intervalMs, env = globalThis }) {
    this.#signaling = signaling
    this.#intervalMs = intervalMs
    this.#env = env
    stats.on('load', (/** @type {{ url: string, source: string, bytes: number }} */ e) => {
      // Without a location, a path-only URL still has its path.
      const path = e.source === 'peer' && new URL(e.url, env.location?.href ?? 'x:/').pathname
      this.#add({ [e.source]: e.bytes }, path && path.length <= LIMITS.maxUsagePath ? [[path, e.bytes]] : [])
    })
    stats.on('serve', (/** @type {{ bytes: number }} */ e) => this.#add({ served: e.bytes }))
    signaling.on?.('welcome', () => this.send())
    // Hidden or going away (also when shown again: no harm, and nothing when nothing is new).
    for (const type of ['pagehide', 'visibilitychange']) env.addEventListener?.(type, () => this.send())
    // Taken now, not when this page goes: its storage may be gone by then (a closing Firefox context).
    this.#take()
  }

  /**
   * Count bytes, and report them SETTLE_MS after the last count, intervalMs after the first at the latest.
   * @param {Record<string, number>} counts
   * @param {Iterable<[string, number]>} [assets]
   */
  #add (counts, assets = []) {
    for (const s of USAGE_SOURCES) this.#counts[s] += +counts[s] || 0
    for (const [path, bytes] of assets) this.#assets.set(path, (this.#assets.get(path) ?? 0) + bytes)
    clearTimeout(this.#settle)
    this.#settle = setTimeout(() => this.send(), SETTLE_MS)
    this.#deadline ??= setTimeout(() => this.send(), this.#intervalMs)
  }

  /**
   * Report now what is new, with what earlier pages could not send. What
   * cannot be sent waits for the next report: in storage, where any page of
   * the site takes it, else in memory. Runs on its own; a host whose page
   * goes away calls it then.
   */
  send () {
    this.#take()
    clearTimeout(this.#settle)
    clearTimeout(this.#deadline)
    this.#deadline = undefined
    let sent = true
    for (;;) {
      const assets = [...this.#assets].slice(0, LIMITS.maxUsageAssets)
      if (!assets.length && USAGE_SOURCES.every((s) => this.#counts[s] === 0)) break
      const message = /** @type {Record<string, unknown>} */ ({ type: 'usage', ...this.#counts, assets })
      if (!(sent &&= this.#signaling.send(message))) this.#unsent.set(message.id = newId(), message)
      this.#counts = zero()
      for (const [path] of assets) this.#assets.delete(path)
    }
    for (const [id, message] of this.#unsent) {
      if (!(sent &&= this.#signaling.send(message))) break
      this.#unsent.delete(id)
    }
    if (this.#unsent.size) {
      this.#storage((s) => {
        s.setItem(STASH_KEY, JSON.stringify([...this.#unsent.values()]))
        this.#unsent.clear()
      })
    }
  }

  /** Take from storage what an earlier page (or this one) could not send. */
  #take () {
    this.#storage((s) => {
      const stash = s.getItem(STASH_KEY)
      s.removeItem(STASH_KEY)
      const taken = [JSON.parse(/** @type {string} */ (stash)) ?? []].flat()
      // (One stashed by an older client, as one object, has no type nor id.)
      for (const message of taken) this.#unsent.set(message.id ??= newId(), { ...message, type: 'usage' })
      // Reported as this page's own bytes are: SETTLE_MS from now, or with its next report.
      if (taken.length) this.#add({})
    })
  }

  /** @param {(s: Storage) => void} fn run with the page's storage; not at all without, nor past a failure */
  #storage (fn) {
    try { fn(/** @type {Storage} */ (this.#env.localStorage)) } catch {}
  }
}
