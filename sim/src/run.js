/**
 * One simulation run: a source (trace file or synthetic generator) feeds the
 * session window, which feeds the Maygh engine and, beside it, the plug-in
 * baseline engine, in a single pass. Used by the CLI, the benches and tests.
 */
import { FLAG_ASSET, RequestBatch } from './batch.js'
import { SimError } from './errors.js'
import { Engine } from './engine.js'
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
 * @typedef {object} RunResult
 * @property {import('./engine-result.js').EngineResult} maygh
 * @property {import('./engine-result.js').EngineResult | null} plugin
 * @property {Record<string, unknown>} input what was read or generated
 * @property {number} reordered requests whose time went backwards (clamped)
 * @property {number} elapsedSeconds wall time of the run
 */

/**
 * @param {SourceSpec} source
 * @param {Readonly<import('./config.js').SimConfig>} config
 * @param {{ plugin?: boolean, onProgress?: (fraction: number, requests: number) => void }} [options]
 * @returns {Promise<RunResult>}
 */
export async function runSimulation (source, config, options = {}) {
  const started = performance.now()
  const { engines, plugin, window } = replayPipeline(config, options)
  const onProgress = options.onProgress
  let requests = 0
  /** @type {() => Record<string, unknown>} */
  let describe
  if (source.trace !== undefined && source.synthetic !== undefined) throw new SimError('MGH_SIM_ERR_NO_INPUT', 'both given')
  if (source.trace !== undefined) {
    const reader = new TraceReader(source.trace, { format: source.format ?? 'auto', assets: config.assets })
    for await (const batch of reader.batches()) {
      window.push(batch)
      requests += batch.n
      if (onProgress) onProgress(reader.progress(), requests)
    }
    describe = () => reader.summary()
  } else if (source.synthetic === 'etsy') {
    const gen = new EtsyGenerator({ seed: config.seed, ...source.generator })
    for (const batch of gen.batches()) {
      window.push(batch)
      requests += batch.n
      if (onProgress) onProgress(gen.progress(), requests)
      // let a caller's timers (progress bar) run between batches
      if (onProgress && (requests & 0xfffff) < batch.n) await new Promise((resolve) => setImmediate(resolve))
    }
    describe = () => gen.summary()
  } else {
    throw new SimError('MGH_SIM_ERR_NO_INPUT', source.synthetic === undefined ? undefined : `unknown synthetic trace "${source.synthetic}"; only "etsy"`)
  }
  window.flush()
  const results = engines.map((e) => e.finish())
  return {
    maygh: results[0],
    plugin: plugin ? results[1] : null,
    input: describe(),
    reordered: window.reordered,
    elapsedSeconds: (performance.now() - started) / 1000
  }
}

/**
 * The run as one plain object: what `--json` prints and the HTML report reads.
 * Top-level keys include requests, bytes, originBytes, peerBytes, cacheBytes,
 * savings, oracleSavings and pluginSavings.
 * @param {RunResult} run
 * @param {Readonly<import('./config.js').SimConfig>} config
 * @param {{ param: string, rows: import('./sweep.js').SweepRow[] }[]} [sweeps]
 * @returns {Record<string, any>}
 */
export function toReport (run, config, sweeps = []) {
  const { label, adoption, ...maygh } = run.maygh
  const plugin = run.plugin
  return {
    ...maygh,
    // distinct objects requested: the input knows (the engine sees only the largest id)
    objects: typeof run.input.objects === 'number' ? run.input.objects : maygh.objects,
    pluginSavings: plugin ? plugin.savings : 0,
    plugin: plugin
      ? {
          adoption: plugin.adoption,
          savings: plugin.savings,
          peerSavings: plugin.peerSavings,
          cacheSavings: plugin.cacheSavings,
          oracleSavings: plugin.oracleSavings,
          originBytes: plugin.originBytes,
          adopters: plugin.adopters
        }
      : null,
    adoption,
    input: run.input,
    reorderedRequests: run.reordered,
    config: { ...config },
    sweeps,
    elapsedSeconds: run.elapsedSeconds,
    requestsPerSecond: run.elapsedSeconds > 0 ? maygh.requests / run.elapsedSeconds : 0
  }
}

/**
 * Replays requests given in memory, e.g. a hand-written trace:
 * `[[ts, client, object, bytes], …]`, all assets unless a fifth element gives
 * the flags (0 = not an asset: goes to the origin). Returns the same shape as
 * {@link runSimulation}.
 * @param {ArrayLike<[number, number, number, number, number?]>} requests in time order
 * @param {Readonly<import('./config.js').SimConfig>} config
 * @param {{ plugin?: boolean }} [options]
 * @returns {RunResult}
 */
export function replayRequests (requests, config, options = {}) {
  const started = performance.now()
  const { engines, plugin, window } = replayPipeline(config, options)
  const batch = new RequestBatch()
  for (let i = 0; i < requests.length; i++) {
    const [ts, client, object, bytes, flags] = requests[i]
    batch.push(ts, client, object, bytes, flags ?? FLAG_ASSET)
    if (batch.full()) {
      window.push(batch)
      batch.n = 0
    }
  }
  window.push(batch)
  window.flush()
  const results = engines.map((e) => e.finish())
  return {
    maygh: results[0],
    plugin: plugin ? results[1] : null,
    input: { kind: 'memory', requests: requests.length },
    reordered: window.reordered,
    elapsedSeconds: (performance.now() - started) / 1000
  }
}

/**
 * The Maygh engine (and the plug-in baseline's, unless disabled or at zero
 * adoption) fed by one session window.
 * @param {Readonly<import('./config.js').SimConfig>} config
 * @param {{ plugin?: boolean }} options
 * @returns {{ engines: Engine[], plugin: boolean, window: SessionWindow }}
 */
function replayPipeline (config, options) {
  const engines = [new Engine(config, { label: 'maygh' })]
  const plugin = options.plugin !== false && config.pluginAdoption > 0
  if (plugin) engines.push(new Engine(config, { adoption: config.pluginAdoption, label: 'plugin' }))
  const window = new SessionWindow(config.sessionGap, (batch) => {
    for (const engine of engines) engine.processBatch(batch)
  })
  return { engines, plugin, window }
}
