/**
 * Zipf-distributed ranks in O(1) per draw: P(rank r) ∝ (r + 1)^-alpha for
 * r = 0 … n-1, sampled with Vose's alias method (one uniform picks a column,
 * a second decides between the column and its alias).
 */

/** A Zipf(alpha) sampler over n ranks. */
export class ZipfSampler {
  /**
   * @param {number} n ranks
   * @param {number} alpha exponent (> 0)
   */
  constructor (n, alpha) {
    this.n = n
    this.alpha = alpha
    this.prob = new Float64Array(n)
    this.alias = new Int32Array(n)
    const w = new Float64Array(n)
    let sum = 0
    for (let r = 0; r < n; r++) sum += (w[r] = (r + 1) ** -alpha)
    /** probability of rank 0, for tests */
    this.p0 = w[0] / sum
    // Vose: scale to mean 1, pair each light column with a heavy one
    const small = new Int32Array(n)
    const large = new Int32Array(n)
    let ns = 0
    let nl = 0
    for (let r = 0; r < n; r++) {
      w[r] = (w[r] * n) / sum
      if (w[r] < 1) small[ns++] = r
      else large[nl++] = r
    }
    while (ns > 0 && nl > 0) {
      const s = small[--ns]
      const l = large[nl - 1]
      this.prob[s] = w[s]
      this.alias[s] = l
      w[l] = w[l] + w[s] - 1
      if (w[l] < 1) {
        nl--
        small[ns++] = l
      }
    }
    while (nl > 0) this.prob[large[--nl]] = 1
    while (ns > 0) this.prob[small[--ns]] = 1
  }

  /**
   * @param {import('../rng.js').Rng} rng
   * @returns {number} a rank in [0, n)
   */
  sample (rng) {
    const col = rng.int(this.n)
    return rng.random() < this.prob[col] ? col : this.alias[col]
  }
}
