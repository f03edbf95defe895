/**
 * Sensitivity sweeps: `--sweep linger=0,60,300,1800` replays the same input
 * once per value of one model option, everything else fixed, and tabulates
 * savings, so the weight of each assumption is visible.
 */
import { SIM_OPTION_SPECS, parseNumber, resolveConfig } from './config.js'
import { SimError } from './errors.js'
import { runSimulation } from './run.js'

/** @typedef {{ key: keyof import('./config.js').SimConfig, flag: string, values: number[] }} SweepSpec */

/**
 * Reads `NAME=V1,V2,…` where NAME is a numeric model option's flag (or its key).
 * @param {string} text
 * @returns {SweepSpec}
 */
export function parseSweep (text) {
  const m = /^([a-zA-Z-]+)=(.+)$/.exec(text.trim())
  if (m === null) throw new SimError('MGH_SIM_ERR_SWEEP', JSON.stringify(text))
  const entry = Object.entries(SIM_OPTION_SPECS).find(([key, spec]) => spec.flag === m[1] || key === m[1])
  if (entry === undefined || entry[1].kind === 'regex') {
    const names = Object.values(SIM_OPTION_SPECS).filter((s) => s.kind !== 'regex').map((s) => s.flag)
    throw new SimError('MGH_SIM_ERR_SWEEP', `"${m[1]}" is not one of ${names.join(', ')}`)
  }
  const [key, spec] = entry
  const values = m[2].split(',').map((v) => parseNumber(spec.flag, v, spec.kind))
  if (values.length === 0) throw new SimError('MGH_SIM_ERR_SWEEP', `no values for ${m[1]}`)
  return { key: /** @type {SweepSpec['key']} */ (key), flag: spec.flag, values }
}

/**
 * @typedef {object} SweepRow
 * @property {number} value
 * @property {number} savings
 * @property {number} peerSavings
 * @property {number} cacheSavings
 * @property {number} oracleSavings
 * @property {number} requests
 * @property {number} peakLookupsPerSecond
 * @property {number} maxUploadBytes
 */

/**
 * Runs one replay per value (validated up front, so a bad value fails before any run).
 * @param {import('./run.js').SourceSpec} source
 * @param {Readonly<import('./config.js').SimConfig>} base
 * @param {SweepSpec} spec
 * @param {{ onProgress?: (fraction: number, requests: number) => void, onRun?: (value: number, index: number) => void }} [options]
 * @returns {Promise<{ param: string, rows: SweepRow[] }>}
 */
export async function runSweep (source, base, spec, options = {}) {
  const configs = spec.values.map((value) => resolveConfig({ ...base, [spec.key]: value }))
  /** @type {SweepRow[]} */
  const rows = []
  for (let i = 0; i < configs.length; i++) {
    options.onRun?.(spec.values[i], i)
    const { maygh } = await runSimulation(source, configs[i], { plugin: false, onProgress: options.onProgress })
    rows.push({
      value: spec.values[i],
      savings: maygh.savings,
      peerSavings: maygh.peerSavings,
      cacheSavings: maygh.cacheSavings,
      oracleSavings: maygh.oracleSavings,
      requests: maygh.requests,
      peakLookupsPerSecond: maygh.coordinator.lookupsPerSecond.peak,
      maxUploadBytes: maygh.fairness.maxBytes
    })
  }
  return { param: spec.flag, rows }
}
