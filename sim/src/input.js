/**
 * The input stage of a run: a source (trace file or synthetic generator)
 * read batch by batch through the session window, which hands finished
 * batches to a sink. It runs in the engines' thread or, with run.js's
 * `inputThread`, in a worker of its own (input-worker.js) feeding the engines
 * through a shared-memory ring, so that reading and replaying overlap.
 */
import { SimError } from './errors.js'
import { SessionWindow } from './session-window.js'
import { TraceReader } from './trace-reader.js'
import { EtsyGenerator } from './synthetic-etsy.js'

/**
 * @typedef {object} SourceSpec
 * @property {string} [trace] path of a trace file
 * @property {import('./trace-reader.js').TraceFormat} [format]
 * @property {'etsy'} [synthetic]
 * @property {Partial<import('./etsy-params.js').EtsyParams>} [generator] generator parameters
 */

/**
 * @typedef {object} InputSummary
 * @property {Record<string, unknown>} input what was read or generated
 * @property {number} reordered requests whose time went backwards (clamped)
 */

/**
 * Reads the whole source into `sink`, session-windowed.
 * @param {SourceSpec} source
 * @param {Readonly<import('./config.js').SimConfig>} config
 * @param {(batch: import('./batch.js').RequestBatch) => void} sink must be done with the batch on return
 * @param {{ onProgress?: (fraction: number, requests: number) => void, yieldToTimers?: boolean }} [options]
 *   yieldToTimers: let the thread's timers (a progress bar) run about every million requests
 * @returns {Promise<InputSummary>}
 */
export async function feedInput (source, config, sink, options = {}) {
  const { onProgress, yieldToTimers = false } = options
  const window = new SessionWindow(config.sessionGap, sink)
  let requests = 0
  /** @type {{ batches: () => Iterable<import('./batch.js').RequestBatch> | AsyncIterable<import('./batch.js').RequestBatch>, progress: () => number, summary: () => Record<string, unknown> }} */
  let reader
  if (source.trace !== undefined && source.synthetic !== undefined) throw new SimError('MGH_SIM_ERR_NO_INPUT', 'both given')
  if (source.trace !== undefined) {
    reader = new TraceReader(source.trace, { format: source.format ?? 'auto', assets: config.assets })
  } else if (source.synthetic === 'etsy') {
    reader = new EtsyGenerator({ seed: config.seed, ...source.generator })
  } else {
    throw new SimError('MGH_SIM_ERR_NO_INPUT', source.synthetic === undefined ? undefined : `unknown synthetic trace "${source.synthetic}"; only "etsy"`)
  }
  for await (const batch of reader.batches()) {
    window.push(batch)
    requests += batch.n
    if (onProgress) onProgress(reader.progress(), requests)
    if (yieldToTimers && (requests & 0xfffff) < batch.n) await new Promise((resolve) => setImmediate(resolve))
  }
  window.flush()
  return { input: reader.summary(), reordered: window.reordered }
}
