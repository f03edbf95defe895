/**
 * A progress bar on stderr, shown only when stderr is a terminal and the run
 * has lasted more than a second. Redraws at most five times a second.
 */

/** Draws and clears the bar. */
export class ProgressBar {
  /**
   * @param {NodeJS.WriteStream} stream normally process.stderr
   * @param {{ enabled?: boolean, delayMs?: number, label?: string }} [options]
   */
  constructor (stream, options = {}) {
    this.stream = stream
    this.enabled = (options.enabled ?? true) && stream.isTTY === true
    this.delayMs = options.delayMs ?? 1000
    this.label = options.label ?? 'replaying'
    this.started = performance.now()
    this.fraction = 0
    this.requests = 0
    this.shown = false
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
    if (this.enabled) {
      this.timer = setInterval(() => this.draw(), 200)
      this.timer.unref()
    }
  }

  /**
   * @param {number} fraction 0–1
   * @param {number} requests replayed so far
   */
  update (fraction, requests) {
    this.fraction = fraction
    this.requests = requests
  }

  draw () {
    const elapsed = (performance.now() - this.started) / 1000
    if (elapsed * 1000 < this.delayMs) return
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - 50))
    const done = Math.round(this.fraction * width)
    const rate = this.requests / elapsed
    const eta = this.fraction > 0.01 ? (elapsed / this.fraction) * (1 - this.fraction) : NaN
    const text = `${this.label} [${'#'.repeat(done)}${'.'.repeat(width - done)}] ${(this.fraction * 100).toFixed(0).padStart(3)}% ` +
      `${(this.requests / 1e6).toFixed(1)}M req ${(rate / 1e6).toFixed(2)}M/s` + (Number.isFinite(eta) ? ` ETA ${eta.toFixed(0)}s` : '')
    this.stream.write(`\r${text}\x1b[K`)
    this.shown = true
  }

  /** Stops redrawing and erases the bar. */
  done () {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    if (this.shown) this.stream.write('\r\x1b[K')
    this.shown = false
  }
}
