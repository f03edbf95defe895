/**
 * Latency samples: each worker keeps a bounded uniform sample of its
 * transactions' latencies (reservoir sampling, Algorithm R), and the main
 * thread merges the workers' samples, weighting each by how many latencies it
 * stands for, into percentiles. A sorted array is exact while a worker stays
 * under its capacity (500k transactions by default), which is all a
 * percentile needs here; no histogram library is worth a dependency for it.
 */

/**
 * @typedef {object} LatencySummary what a worker sends back
 * @property {Float64Array} samples the sample, unsorted
 * @property {number} seen latencies recorded in all
 * @property {number} max the largest latency recorded, sampled or not
 */

export class LatencySample {
  /** @param {number} [capacity] */
  constructor (capacity = 500_000) {
    this.samples = new Float64Array(capacity)
    this.seen = 0
    this.max = 0
  }

  /** @param {number} ms */
  add (ms) {
    if (ms > this.max) this.max = ms
    const capacity = this.samples.length
    if (this.seen < capacity) {
      this.samples[this.seen] = ms
    } else {
      const slot = Math.floor(Math.random() * (this.seen + 1))
      if (slot < capacity) this.samples[slot] = ms
    }
    this.seen++
  }

  /** @returns {LatencySummary} a copy, fit to send to another thread */
  summary () {
    return { samples: this.samples.slice(0, Math.min(this.seen, this.samples.length)), seen: this.seen, max: this.max }
  }
}

/**
 * @param {LatencySummary[]} parts
 * @param {number[]} quantiles each in [0, 1]
 * @returns {number[]} the latency at each quantile over all parts (NaN when there are none)
 */
export function mergedQuantiles (parts, quantiles) {
  /** @type {[number, number][]} [latency, weight] */
  const weighted = []
  for (const { samples, seen } of parts) {
    const weight = samples.length === 0 ? 0 : seen / samples.length
    for (const ms of samples) weighted.push([ms, weight])
  }
  weighted.sort((a, b) => a[0] - b[0])
  const total = weighted.reduce((sum, [, weight]) => sum + weight, 0)
  return quantiles.map((q) => {
    const target = q * total
    let cumulative = 0
    for (const [ms, weight] of weighted) {
      cumulative += weight
      if (cumulative >= target) return ms
    }
    return NaN
  })
}
