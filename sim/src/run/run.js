/**
 * One simulation run: a source (trace file or synthetic generator) feeds the
 * session window, which feeds the Maygh engine and, beside it, the plug-in
 * baseline engine, in a single pass. With `inputThread` the reading runs in a
 * worker thread of its own, overlapping the replay (same results). Used by
 * the CLI (through run-pool.js), the benches and tests.
 */
import { FLAG_ASSET, RequestBatch } from '../batch.js'
import { Engine } from '../engine/engine.js'
import { feedInput } from '../input/input.js'
import { feedInputThreaded } from '../input/input-thread.js'
import { SessionWindow } from '../input/session-window.js'

/** @typedef {import('../input/input.js').SourceSpec} SourceSpec */

/**
 * @typedef {object} RunResult
 * @property {import('../engine/engine-result.js').EngineResult} maygh
 * @property {import('../engine/engine-result.js').EngineResult | null} plugin
 * @property {Record<string, unknown>} input what was read or generated
 * @property {number} reordered requests whose time went backwards (clamped)
 * @property {number} elapsedSeconds wall time of the run
 */

/**
 * @param {SourceSpec} source
 * @param {Readonly<import('../config.js').SimConfig>} config
 * @param {{ plugin?: boolean, inputThread?: boolean, onProgress?: (fraction: number, requests: number) => void }} [options]
 *   inputThread: read the input in a worker thread, overlapping the replay (worth it with a second core)
 * @returns {Promise<RunResult>}
 */
export async function runSimulation (source, config, options = {}) {
  const started = performance.now()
  const { engines, plugin } = makeEngines(config, options)
  const sink = (/** @type {RequestBatch} */ batch) => {
    for (const engine of engines) engine.processBatch(batch)
  }
  const onProgress = options.onProgress
  const { input, reordered } = options.inputThread
    ? await feedInputThreaded(source, config, sink, { onProgress })
    : await feedInput(source, config, sink, { onProgress, yieldToTimers: onProgress !== undefined })
  const results = engines.map((e) => e.finish())
  return {
    maygh: results[0],
    plugin: plugin ? results[1] : null,
    input,
    reordered,
    elapsedSeconds: (performance.now() - started) / 1000
  }
}

/**
 * The run as one plain object: what `--json` prints and the HTML report reads.
 * Top-level keys include requests, bytes, originBytes, peerBytes, cacheBytes,
 * savings, oracleSavings and pluginSavings.
 * @param {RunResult} run
 * @param {Readonly<import('../config.js').SimConfig>} config
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
 * @param {Readonly<import('../config.js').SimConfig>} config
 * @param {{ plugin?: boolean }} [options]
 * @returns {RunResult}
 */
export function replayRequests (requests, config, options = {}) {
  const started = performance.now()
  const { engines, plugin } = makeEngines(config, options)
  const window = new SessionWindow(config.sessionGap, (b) => {
    for (const engine of engines) engine.processBatch(b)
  })
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
 * The Maygh engine, and the plug-in baseline's unless disabled or at zero adoption.
 * @param {Readonly<import('../config.js').SimConfig>} config
 * @param {{ plugin?: boolean }} options
 * @returns {{ engines: Engine[], plugin: boolean }}
 */
function makeEngines (config, options) {
  const engines = [new Engine(config, { label: 'maygh' })]
  const plugin = options.plugin !== false && config.pluginAdoption > 0
  if (plugin) engines.push(new Engine(config, { adoption: config.pluginAdoption, label: 'plugin' }))
  return { engines, plugin }
}
