/**
 * The page's byte reports to the coordinator (`usage`), which sums them per
 * site for its `/stats`, `/metrics` and dashboard: every `usageMs`, and once
 * more when the page is hidden, the asset bytes it got from peers, from the
 * origin and from its own store and the bytes it served since its last
 * report, with the peer bytes per asset path (the largest first, at most
 * LIMITS.maxUsageAssets; the rest wait for the next report). Nothing is sent
 * while nothing is new; what cannot be sent (not joined) waits.
 */
import { LIMITS, USAGE_SOURCES } from '../../protocol/index.js'

export class UsageReport {
  /**
   * @param {object} o
   * @param {{ send: (msg: object) => boolean }} o.signaling
   * @param {import('./stats.js').Stats} o.stats
   * @param {number} o.intervalMs
   */
  constructor ({ signaling, stats, intervalMs }) {
    this.signaling = signaling
    /** @type {Record<string, number>} bytes by source since the last report */
    this.counts = Object.fromEntries(USAGE_SOURCES.map((s) => [s, 0]))
    /** @type {Map<string, number>} asset path → peer bytes since the last report */
    this.assets = new Map()
    stats.on('load', (/** @type {{ url: string, source: string, bytes: number }} */ e) => {
      this.counts[e.source] += e.bytes
      const path = new URL(e.url, location.href).pathname
      if (e.source === 'peer' && path.length <= LIMITS.maxUsagePath) this.assets.set(path, (this.assets.get(path) ?? 0) + e.bytes)
    })
    stats.on('serve', (/** @type {{ bytes: number }} */ e) => { this.counts.served += e.bytes })
    setInterval(() => this.send(), intervalMs)
    addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') this.send() })
  }

  /** Send what is new, if anything. */
  send () {
    const assets = [...this.assets].sort((a, b) => b[1] - a[1]).slice(0, LIMITS.maxUsageAssets)
    if (!assets.length && USAGE_SOURCES.every((s) => this.counts[s] === 0)) return
    if (!this.signaling.send({ type: 'usage', ...this.counts, assets })) return
    for (const s of USAGE_SOURCES) this.counts[s] = 0
    for (const [path] of assets) this.assets.delete(path)
  }
}
