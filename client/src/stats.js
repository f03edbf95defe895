/**
 * Byte and request counters behind `Maygh.stats()`, plus the events each
 * counted thing fires (`load`, `serve`, `reject`, `error`).
 */
import { Emitter } from './emitter.js'

export class Stats extends Emitter {
  counts = {
    peer: { bytes: 0, count: 0 },
    origin: { bytes: 0, count: 0 },
    cache: { bytes: 0, count: 0 },
    served: { bytes: 0, count: 0 },
    rejected: 0,
    /** IndexedDB entries that failed verification and were deleted */
    corrupt: 0,
    /** loads that failed everywhere (the element falls back to its plain URL) */
    failed: 0,
    /** failed steps by error code (a peer timing out, a miss, …), each also an `error` event */
    errors: /** @type {Record<string, number>} */ ({}),
    /** the coordinator last joined (`joined` in Maygh.stats() says whether still), and how often a join went to a different one than the one before */
    coordinator: { url: /** @type {string | null} */ (null), switches: 0 }
  }

  /** A coordinator welcomed us. @param {string} url its URL, as configured or as an `alternates` entry named it */
  joined (url) {
    const c = this.counts.coordinator
    if (c.url !== null && c.url !== url) c.switches++
    c.url = url
  }

  /**
   * A finished load; `asked`: why its origin fetch began, when it did (hedge.js).
   * @param {{ url: string, hash: string | null, source: 'peer' | 'origin' | 'cache', bytes: number, ms: number, peer?: string, asked?: import('./hedge.js').Asked }} event
   */
  loaded (event) {
    const c = this.counts[event.source]
    c.bytes += event.bytes
    c.count++
    this.emit('load', event)
  }

  /** @param {{ hash: string, peer: string, bytes: number }} event */
  served (event) {
    const c = this.counts.served
    c.bytes += event.bytes
    c.count++
    this.emit('serve', event)
  }

  /** @param {{ url: string, hash: string, peer: string }} event */
  rejected (event) {
    this.counts.rejected++
    this.emit('reject', event)
  }

  /** A load failed everywhere (its `error` event says why). */
  failed () {
    this.counts.failed++
  }

  /** @param {{ url?: string, hash?: string, code: string, message: string }} event */
  error (event) {
    this.counts.errors[event.code] = (this.counts.errors[event.code] ?? 0) + 1
    this.emit('error', event)
  }

  /** Deep copy of the counters. */
  snapshot () {
    return JSON.parse(JSON.stringify(this.counts))
  }
}
