/**
 * The model's knobs: one documented defaults object, merged with overrides,
 * validated once and frozen. Flags are parsed only in the CLI; everything else
 * receives a resolved config. docs/simulator.md ("Flags") lists every key.
 */
import { POLICY_DEFAULTS } from '../../coordinator/src/policy/peer-selection.js'
import { DEFAULT_QUOTA_BYTES, ERRORS, MayghError } from '../../protocol/index.js'

/** Documented defaults of the replay model (docs/simulator.md, "The model"). */
const simDefaults = {
  /** fraction of clients that run Maygh (1 = every visitor: Maygh needs no install) */
  adoption: 1,
  /** adoption of the installed-plug-in baseline, replayed beside every run (0 = skip it) */
  pluginAdoption: 0.1,
  /** each browser's store, an LRU under this many bytes (the client's default quotaMb is 50) */
  quotaBytes: DEFAULT_QUOTA_BYTES,
  /** seconds a client stays online, able to serve, after the last request of its session */
  linger: 60,
  /** a gap between a client's requests longer than this (seconds) ends its session */
  sessionGap: 1800,
  /** probability that a new peer connection fails (NAT traversal without a relay) */
  failRate: 0.1,
  /** seconds to set up a new peer connection; the holder must stay online that long */
  setupTime: 1,
  /** bytes per second a client may upload, long-run (Infinity = no cap, as in the client) */
  uploadRate: Infinity,
  /** bytes a client may upload in a burst above its rate (token-bucket depth) */
  uploadBurst: 4 * 1024 * 1024,
  /** holders a lookup returns at most (the coordinator's maxHolders) */
  maxHolders: POLICY_DEFAULTS.maxHolders,
  /** holders the store samples per lookup before the policy ranks them */
  candidateSample: POLICY_DEFAULTS.candidateSample,
  /** what peers may serve: 'static' (images, CSS, JS, fonts, media: static-assets.js), 'all' (every successful GET) or a URL regex */
  assets: 'static',
  /** seed of every random choice (sampling, connection failures, adoption, synthetic traces) */
  seed: 1
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const SIM_DEFAULTS = Object.freeze(simDefaults)

/** @typedef {typeof SIM_DEFAULTS} SimConfig */

/**
 * Documented defaults of how a trace is read (docs/simulator.md, "Input and
 * output flags"); they apply to `--trace` only: the generator writes in order.
 */
const inputDefaults = {
  /**
   * seconds a request's time may be behind the newest time read before it;
   * such requests are clamped to it and counted. Servers write a line when
   * the response completes, stamped with the time the request arrived, so
   * neighbouring lines are seconds out of order (the EPA log: 15 lines, at
   * most 8 s). Larger gaps mean a merged, concatenated or shuffled log,
   * which clamping would distort: the run stops and offers --sort.
   */
  orderTolerance: 10,
  /** with --sort, requests sorted in memory up to this many bytes of them (about 32 a request), on disk above */
  sortMemoryBytes: 512 * 1024 * 1024
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const INPUT_DEFAULTS = Object.freeze(inputDefaults)

/**
 * How each knob is checked and how its flag's text is read.
 * kind: 'fraction' [0,1]; 'seconds' ≥ 0; 'bytes' ≥ 0 with k/m/g suffixes; 'rate' bytes/s or inf;
 * 'count' integer ≥ 1; 'int' any integer; 'assets' `static`, `all` or a regular expression.
 * @type {Readonly<Record<keyof SimConfig, { kind: string, flag: string }>>}
 */
export const SIM_OPTION_SPECS = Object.freeze({
  adoption: { kind: 'fraction', flag: 'adoption' },
  pluginAdoption: { kind: 'fraction', flag: 'plugin-adoption' },
  quotaBytes: { kind: 'bytes', flag: 'quota' },
  linger: { kind: 'seconds', flag: 'linger' },
  sessionGap: { kind: 'seconds', flag: 'session-gap' },
  failRate: { kind: 'fraction', flag: 'fail-rate' },
  setupTime: { kind: 'seconds', flag: 'setup-time' },
  uploadRate: { kind: 'rate', flag: 'upload-rate' },
  uploadBurst: { kind: 'bytes', flag: 'upload-burst' },
  maxHolders: { kind: 'count', flag: 'max-holders' },
  candidateSample: { kind: 'count', flag: 'candidate-sample' },
  assets: { kind: 'assets', flag: 'assets' },
  seed: { kind: 'int', flag: 'seed' }
})

/** the generator's parameters that are byte sizes: their flags take k/m/g suffixes, reports show them as sizes */
export const GENERATOR_BYTE_PARAMS = Object.freeze(['sizeMedian', 'tailMin', 'sizeMax', 'siteAssetMedian'])

const SUFFIX = /** @type {Record<string, number>} */ ({ '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 })

/**
 * Reads a flag's text as a number of the given kind: `50m` is 50 MiB, `inf`
 * is Infinity, `1e6` works. Throws MGH_SIM_ERR_BAD_VALUE.
 * @param {string} name flag name, for the message
 * @param {string} text
 * @param {string} kind
 * @returns {number}
 */
export function parseNumber (name, text, kind) {
  const t = String(text).trim().toLowerCase()
  if (t === 'inf' || t === 'infinity' || t === 'none') return Infinity
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([kmgt]?)(?:i?b)?$/.exec(t)
  if (m === null || (m[2] !== '' && kind !== 'bytes' && kind !== 'rate')) {
    throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--${name} ${JSON.stringify(text)} is not a number`)
  }
  return Number(m[1]) * SUFFIX[m[2]]
}

/**
 * Merges `overrides` over {@link SIM_DEFAULTS}, checks every value once and
 * freezes the result. Throws MGH_SIM_ERR_BAD_VALUE naming the flag.
 * @param {Partial<SimConfig>} [overrides]
 * @returns {Readonly<SimConfig>}
 */
export function resolveConfig (overrides = {}) {
  /** @type {Record<string, unknown>} */
  const config = { ...SIM_DEFAULTS }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue
    if (!(key in SIM_DEFAULTS)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `unknown option ${key}`)
    config[key] = value
  }
  for (const [key, spec] of Object.entries(SIM_OPTION_SPECS)) checkValue(spec.flag, config[key], spec.kind)
  if (/** @type {number} */ (config.candidateSample) < /** @type {number} */ (config.maxHolders)) {
    throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--candidate-sample (${config.candidateSample}) must be at least --max-holders (${config.maxHolders})`)
  }
  return Object.freeze(/** @type {SimConfig} */ (config))
}

/**
 * @param {string} flag
 * @param {unknown} v
 * @param {string} kind
 */
function checkValue (flag, v, kind) {
  const bad = (/** @type {string} */ why) => new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--${flag} ${String(v)} ${why}`)
  if (kind === 'assets') {
    if (typeof v !== 'string') throw bad('must be a string')
    // '' used to mean "everything"; one spelling for that now, so a forgotten value is not read as "all"
    if (v === '') throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, "--assets '' is ambiguous: write --assets all for every successful GET, or --assets static (the default)")
    try { RegExp(v) } catch { throw bad('is not static, all or a valid regular expression') }
    return
  }
  if (typeof v !== 'number' || Number.isNaN(v)) throw bad('is not a number')
  if (kind === 'fraction' && !(v >= 0 && v <= 1)) throw bad('must be between 0 and 1')
  if ((kind === 'seconds' || kind === 'bytes') && !(v >= 0 && Number.isFinite(v))) throw bad('must be a finite number ≥ 0')
  if (kind === 'rate' && !(v >= 0)) throw bad('must be ≥ 0 (or inf)')
  if (kind === 'count' && !(Number.isInteger(v) && v >= 1 && v <= 1024)) throw bad('must be an integer from 1 to 1024')
  if (kind === 'int' && !Number.isSafeInteger(v)) throw bad('must be an integer')
}
