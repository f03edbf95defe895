/**
 * Sensitivity sweeps: `--sweep linger=0,60,300,1800` replays the same input
 * once per value of one model option, everything else fixed, and tabulates
 * savings, so the weight of each assumption is visible. The runs themselves
 * go through run-pool.js with the main run, several at once.
 */
import { SIM_OPTION_SPECS, TEXT_KINDS, parseNumber, resolveConfig } from '../config.js'
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { formatBinaryBytes } from '../report/format.js'

/** @typedef {{ key: keyof import('../config.js').SimConfig, flag: string, kind: string, values: number[] }} SweepSpec */

/**
 * Reads `NAME=V1,V2,…` where NAME is a numeric model option's flag (or its key).
 * @param {string} text
 * @returns {SweepSpec}
 */
export function parseSweep (text) {
  const m = /^([a-zA-Z-]+)=(.+)$/.exec(text.trim())
  if (m === null) throw new MayghError(ERRORS.MGH_SIM_ERR_SWEEP, JSON.stringify(text))
  const entry = Object.entries(SIM_OPTION_SPECS).find(([key, spec]) => spec.flag === m[1] || key === m[1])
  if (entry === undefined || TEXT_KINDS.includes(entry[1].kind)) {
    const names = Object.values(SIM_OPTION_SPECS).filter((s) => !TEXT_KINDS.includes(s.kind)).map((s) => s.flag)
    throw new MayghError(ERRORS.MGH_SIM_ERR_SWEEP, `"${m[1]}" is not one of ${names.join(', ')}`)
  }
  const [key, spec] = entry
  const values = m[2].split(',').map((v) => parseNumber(spec.flag, v, spec.kind))
  if (values.length === 0) throw new MayghError(ERRORS.MGH_SIM_ERR_SWEEP, `no values for ${m[1]}`)
  return { key: /** @type {SweepSpec['key']} */ (key), flag: spec.flag, kind: spec.kind, values }
}

/**
 * @typedef {object} SweepRow
 * @property {number} value
 * @property {string} label the value for people: `inf`, byte sizes as `5 MiB`
 * @property {number} savings
 * @property {number} peerSavings
 * @property {number} cacheSavings
 * @property {number} oracleSavings
 * @property {number} requests
 * @property {number} peakLookupsPerSecond
 * @property {number} maxUploadBytes
 */

/**
 * One run a value, without the plug-in baseline (the main run has it). Every
 * value is validated here, so a bad one fails before any run starts.
 * @param {import('./run.js').SourceSpec} source
 * @param {Readonly<import('../config.js').SimConfig>} base
 * @param {SweepSpec} spec
 * @returns {import('./run-pool.js').RunJob[]}
 */
export function sweepJobs (source, base, spec) {
  return spec.values.map((value) => ({ source, config: resolveConfig({ ...base, [spec.key]: value }), plugin: false }))
}

/**
 * The sweep's table from its runs' results, in the order of its values.
 * @param {SweepSpec} spec
 * @param {import('./run.js').RunResult[]} results one a value
 * @returns {{ param: string, rows: SweepRow[] }}
 */
export function sweepTable (spec, results) {
  const rows = results.map(({ maygh }, i) => ({
    value: spec.values[i],
    label: valueLabel(spec, spec.values[i]),
    savings: maygh.savings,
    peerSavings: maygh.peerSavings,
    cacheSavings: maygh.cacheSavings,
    oracleSavings: maygh.oracleSavings,
    requests: maygh.requests,
    peakLookupsPerSecond: maygh.coordinator.lookupsPerSecond.peak,
    maxUploadBytes: maygh.fairness.maxBytes
  }))
  return { param: spec.flag, rows }
}

/**
 * A sweep value as people read it: `inf`, and byte sizes in the binary units
 * the flags take (`5 MiB`, not 5242880).
 * @param {{ kind: string }} spec
 * @param {number} value
 * @returns {string}
 */
export function valueLabel (spec, value) {
  if (value === Infinity) return 'inf'
  if (spec.kind === 'bytes' || spec.kind === 'budget') return formatBinaryBytes(value)
  if (spec.kind === 'rate') return `${formatBinaryBytes(value)}/s`
  if (spec.kind === 'speed') return `${Number((value * 8 / 1e6).toPrecision(4))} Mbit/s`
  return String(value)
}
