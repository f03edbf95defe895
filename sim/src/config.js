/**
 * The model's knobs: one documented defaults object, merged with overrides,
 * validated once and frozen. Flags are parsed only in the CLI; everything else
 * receives a resolved config. docs/simulator.md ("Flags") lists every key.
 * Where a knob is the real client's or coordinator's, its default is theirs,
 * read from the rule it belongs to in policy/ (which they read it from too).
 */
import { BUDGET_DEFAULTS } from '../../policy/budgets.js'
import { HEDGE_DEFAULTS, HEDGE_PREFERENCES } from '../../policy/hedge-rule.js'
import { POLICY_DEFAULTS } from '../../policy/peer-selection.js'
import { REPORT_DEFAULTS } from '../../policy/report-rule.js'
import { ERRORS, MayghError } from '../../protocol/index.js'

const MIB = 1024 * 1024
/** 5 Mbit/s, in bytes per second */
const FIVE_MBIT = 5e6 / 8

/** Documented defaults of the replay model (docs/simulator.md, "The model"). */
const simDefaults = {
  /** fraction of clients that run Maygh (1 = every visitor: Maygh needs no install) */
  adoption: 1,
  /** adoption of the installed-plug-in baseline, replayed beside every run (0 = skip it) */
  pluginAdoption: 0.1,
  /** each browser's store, an LRU under this many bytes (the client's quotaMb) */
  quotaBytes: BUDGET_DEFAULTS.quotaMb * MIB,
  /** seconds a client stays online, able to serve, after the last request of its session */
  linger: 60,
  /** a gap between a client's requests longer than this (seconds) ends its session */
  sessionGap: 1800,
  /**
   * probability that a new peer connection between two traversable clients fails anyway
   * (0: the visitors who cannot connect are `untraversable`'s, chosen per client, as NATs are)
   */
  failRate: 0,
  /** seconds to set up a new peer connection; the holder must stay online that long */
  setupTime: 1,
  /**
   * share of clients behind NATs or firewalls no peer connection traverses (the coordinator
   * hands out STUN only, no TURN relay): every new connection to or from one fails (`no_channel`)
   */
  untraversable: 0.1,
  /** share of clients that fetch from peers but never serve (Save-Data, cellular: the client's receive-only mode) */
  receiveOnly: 0,
  /**
   * 'origin': a visitor's first page view ever is not yet under the service worker (transparent
   * mode), so its assets come from the origin, then are stored and announced (the page's `adopt`);
   * 'peers': from the first request (marked-element mode, the model before issue 22)
   */
  firstPage: 'origin',
  /**
   * 'peers': audio and video like any asset (the client's worker answers their Range requests from
   * the store and peers since issue 26); 'origin': to the origin and never stored (the client
   * before issue 26, which left Range requests to the network)
   */
  media: 'peers',
  /**
   * 'page': every page view is a new page script: a new coordinator join (a new peer record,
   * holdings never chosen), no channels, peers that failed it forgotten; 'session': one peer
   * record and channels for the whole session (the model before issue 22)
   */
  channels: 'page',
  /**
   * the client's hedge rule (policy/hedge-rule.js) under the site's preference, as the client
   * applies it: 'balanced' (the client's default), 'latency' or 'savings'. Peers first, the origin
   * asked too once no peer byte has come by the request's deadline, which the rule sets from its
   * size, its priority (render-blocking, first viewport: `viewportAssets`, or later) and this
   * origin's speed (`originTtfb`, `originRate`); the first complete copy wins. 'off': peer
   * transfers are instant (the model before issue 22)
   */
  hedge: /** @type {import('../../policy/hedge-rule.js').HedgePreference | 'off'} */ (HEDGE_DEFAULTS.hedge),
  /** asset requests of a page view (from its start, the store's answers included) taken to be in its first viewport; the rest are below the fold */
  viewportAssets: 6,
  /** seconds from a request to the coordinator's `holders` reply */
  lookupTime: 0.05,
  /** seconds to the origin's first byte (two round trips of 80 ms: a new connection's handshake, then the request) */
  originTtfb: 0.16,
  /** bytes per second an origin response arrives at (5 Mbit/s) */
  originRate: FIVE_MBIT,
  /** bytes per second a peer transfer arrives at (5 Mbit/s: a residential uplink, SCTP's slow start) */
  peerRate: FIVE_MBIT,
  /** bytes a client serves per session before it stops serving (the client's uploadSessionMb) */
  uploadSession: BUDGET_DEFAULTS.uploadSessionMb * MIB,
  /** bytes a client serves per day (UTC day of log time) before it stops serving (the client's uploadDayMb) */
  uploadDay: BUDGET_DEFAULTS.uploadDayMb * MIB,
  /**
   * which reports count toward quarantine: 'blaming' (the coordinator's rule,
   * policy/report-rule.js: not `no_channel`) or 'all' (every reason: the rule before issue 22)
   */
  reportRule: 'blaming',
  /** distinct reporters within `reportWindow` that quarantine a visitor (the coordinator's reportThreshold) */
  reportThreshold: REPORT_DEFAULTS.reportThreshold,
  /** seconds reports count for (the coordinator's reportWindowMs) */
  reportWindow: REPORT_DEFAULTS.reportWindowMs / 1000,
  /** seconds a quarantined visitor is not handed out (the coordinator's quarantineMs) */
  quarantine: REPORT_DEFAULTS.quarantineMs / 1000,
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
 * The model before issue 22, an idealised client: every behaviour of the real
 * client switched off, and 10% of connections failing at random. Merge it
 * under overrides to replay that model (the docs' "idealised" figures).
 * @type {Readonly<Partial<SimConfig>>}
 */
export const IDEALISED = Object.freeze({
  firstPage: 'peers',
  media: 'peers',
  channels: 'session',
  hedge: 'off',
  untraversable: 0,
  failRate: 0.1,
  receiveOnly: 0,
  uploadSession: Infinity,
  uploadDay: Infinity
})

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
 * 'speed' bytes/s > 0 (k/m/g) or inf; 'budget' bytes (k/m/g) or inf; 'count' integer ≥ 1; 'int' any integer; 'assets' `static`, `all`
 * or a regular expression; 'choice' one of `values`.
 * @type {Readonly<Record<keyof SimConfig, { kind: string, flag: string, values?: readonly string[] }>>}
 */
export const SIM_OPTION_SPECS = Object.freeze({
  adoption: { kind: 'fraction', flag: 'adoption' },
  pluginAdoption: { kind: 'fraction', flag: 'plugin-adoption' },
  quotaBytes: { kind: 'bytes', flag: 'quota' },
  linger: { kind: 'seconds', flag: 'linger' },
  sessionGap: { kind: 'seconds', flag: 'session-gap' },
  failRate: { kind: 'fraction', flag: 'fail-rate' },
  setupTime: { kind: 'seconds', flag: 'setup-time' },
  untraversable: { kind: 'fraction', flag: 'untraversable' },
  receiveOnly: { kind: 'fraction', flag: 'receive-only' },
  firstPage: { kind: 'choice', flag: 'first-page', values: ['origin', 'peers'] },
  media: { kind: 'choice', flag: 'media', values: ['origin', 'peers'] },
  channels: { kind: 'choice', flag: 'channels', values: ['page', 'session'] },
  hedge: { kind: 'choice', flag: 'hedge', values: [...HEDGE_PREFERENCES, 'off'] },
  viewportAssets: { kind: 'count', flag: 'viewport-assets' },
  lookupTime: { kind: 'seconds', flag: 'lookup-time' },
  originTtfb: { kind: 'seconds', flag: 'origin-ttfb' },
  originRate: { kind: 'speed', flag: 'origin-rate' },
  peerRate: { kind: 'speed', flag: 'peer-rate' },
  uploadSession: { kind: 'budget', flag: 'upload-session' },
  uploadDay: { kind: 'budget', flag: 'upload-day' },
  reportRule: { kind: 'choice', flag: 'report-rule', values: ['blaming', 'all'] },
  reportThreshold: { kind: 'count', flag: 'report-threshold' },
  reportWindow: { kind: 'seconds', flag: 'report-window' },
  quarantine: { kind: 'seconds', flag: 'quarantine' },
  uploadRate: { kind: 'rate', flag: 'upload-rate' },
  uploadBurst: { kind: 'bytes', flag: 'upload-burst' },
  maxHolders: { kind: 'count', flag: 'max-holders' },
  candidateSample: { kind: 'count', flag: 'candidate-sample' },
  assets: { kind: 'assets', flag: 'assets' },
  seed: { kind: 'int', flag: 'seed' }
})

/** kinds of model options whose flags take text, not numbers (a sweep cannot vary them) */
export const TEXT_KINDS = Object.freeze(['assets', 'choice'])

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
  if (m === null || (m[2] !== '' && kind !== 'bytes' && kind !== 'rate' && kind !== 'budget' && kind !== 'speed')) {
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
  if (kind === 'choice') {
    const values = /** @type {readonly string[]} */ (Object.values(SIM_OPTION_SPECS).find((spec) => spec.flag === flag)?.values)
    if (typeof v !== 'string' || !values.includes(v)) throw bad(`is not one of ${values.join(', ')}`)
    return
  }
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
  if ((kind === 'rate' || kind === 'budget') && !(v >= 0)) throw bad('must be ≥ 0 (or inf)')
  if (kind === 'speed' && !(v > 0)) throw bad('must be > 0 bytes per second (or inf)')
  if (kind === 'count' && !(Number.isInteger(v) && v >= 1 && v <= 1024)) throw bad('must be an integer from 1 to 1024')
  if (kind === 'int' && !Number.isSafeInteger(v)) throw bad('must be an integer')
}
