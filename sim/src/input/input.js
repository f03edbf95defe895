/**
 * The input stage of a run: a source (trace file or synthetic generator)
 * read batch by batch through the session window, which hands finished
 * batches to a sink. It runs in the engines' thread or, with run.js's
 * `inputThread`, in a worker of its own (input-worker.js) feeding the engines
 * through a shared-memory ring, so that reading and replaying overlap. With
 * `sort` a trace's requests are sorted by time (sort-requests.js) before the
 * window; otherwise the reader refuses a trace out of time order by more
 * than `orderTolerance` seconds.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { INPUT_DEFAULTS } from '../config.js'
import { SessionWindow } from './session-window.js'
import { RequestSorter } from './sort-requests.js'
import { TraceReader } from './trace-reader.js'
import { EtsyGenerator } from '../synthetic/synthetic-etsy.js'

/**
 * @typedef {object} SourceSpec
 * @property {string} [trace] path of a trace file
 * @property {import('./trace-reader.js').TraceFormat} [format]
 * @property {boolean} [sort] sort the trace by time first (--sort)
 * @property {number} [orderTolerance] seconds a trace may be out of time order without --sort (--order-tolerance)
 * @property {number} [sortMemoryBytes] memory for sorting before runs go to disk (--sort-memory)
 * @property {'etsy'} [synthetic]
 * @property {Partial<import('../synthetic/etsy-params.js').EtsyParams>} [generator] generator parameters
 */

/**
 * @typedef {object} InputSummary
 * @property {Record<string, unknown>} input what was read or generated
 * @property {number} reordered requests whose time went backwards, within the tolerance (clamped)
 */

/**
 * Reads the whole source into `sink`, session-windowed.
 * @param {SourceSpec} source
 * @param {Readonly<import('../config.js').SimConfig>} config
 * @param {(batch: import('../batch.js').RequestBatch) => void} sink must be done with the batch on return
 * @param {{ onProgress?: (fraction: number, requests: number) => void, yieldToTimers?: boolean }} [options]
 *   yieldToTimers: let the thread's timers (a progress bar) run about every million requests
 * @returns {Promise<InputSummary>}
 */
export async function feedInput (source, config, sink, options = {}) {
  const { onProgress, yieldToTimers = false } = options
  const window = new SessionWindow(config.sessionGap, sink)
  let requests = 0
  /** @type {{ batches: () => Iterable<import('../batch.js').RequestBatch> | AsyncIterable<import('../batch.js').RequestBatch>, progress: () => number, summary: () => Record<string, unknown> }} */
  let reader
  /** @type {RequestSorter | null} */
  let sorter = null
  if (source.trace !== undefined && source.synthetic !== undefined) throw new MayghError(ERRORS.MGH_SIM_ERR_NO_INPUT, 'both given')
  if (source.trace !== undefined) {
    if (source.sort) sorter = new RequestSorter({ memoryBytes: source.sortMemoryBytes ?? INPUT_DEFAULTS.sortMemoryBytes })
    reader = new TraceReader(source.trace, {
      format: source.format ?? 'auto',
      assets: config.assets,
      orderTolerance: sorter ? Infinity : source.orderTolerance ?? INPUT_DEFAULTS.orderTolerance
    })
  } else if (source.synthetic === 'etsy') {
    reader = new EtsyGenerator({ seed: config.seed, ...source.generator })
  } else {
    throw new MayghError(ERRORS.MGH_SIM_ERR_NO_INPUT, source.synthetic === undefined ? undefined : `unknown synthetic trace "${source.synthetic}"; only "etsy"`)
  }
  const read = reader
  const progress = sorter === null ? () => read.progress() : () => /** @type {RequestSorter} */ (sorter).progress(read.progress())
  /**
   * Reports progress every batch and lets timers run about every million requests.
   * @param {number} n requests so far
   * @param {number} step requests in the last batch
   */
  const tick = async (n, step) => {
    if (onProgress) onProgress(progress(), n)
    if (yieldToTimers && (n & 0xfffff) < step) await new Promise((resolve) => setImmediate(resolve))
  }
  // while the sorter reads, nothing reaches the window: report the reading
  const batches = sorter === null ? read.batches() : sorter.sorted(ticking(read.batches(), tick))
  for await (const batch of batches) {
    window.push(batch)
    requests += batch.n
    await tick(requests, batch.n)
  }
  window.flush()
  const input = reader.summary()
  // sorted, nothing is out of order; the tolerance did not apply
  if (sorter !== null) Object.assign(input, { orderTolerance: null, sorted: sorter.summary() })
  return { input, reordered: window.reordered }
}

/**
 * @param {Iterable<import('../batch.js').RequestBatch> | AsyncIterable<import('../batch.js').RequestBatch>} batches
 * @param {(n: number, step: number) => Promise<void>} tick
 * @returns {AsyncGenerator<import('../batch.js').RequestBatch>}
 */
async function * ticking (batches, tick) {
  let n = 0
  for await (const b of batches) {
    yield b
    n += b.n
    await tick(n, b.n)
  }
}
