/**
 * The client's configuration: one defaults object, read once from the script
 * tag's data attributes, clamped, then frozen. A bad attribute never stops the
 * page: out-of-range values are clamped to the nearest allowed one with a
 * console warning, because throwing here would leave `data-maygh-src` images
 * unloaded.
 */
import { BUDGET_DEFAULTS } from '../../policy/budgets.js'
import { HEDGE_DEFAULTS, HEDGE_PREFERENCES } from '../../policy/hedge-rule.js'
import { MODES } from './uplink.js'

/**
 * Documented defaults (README, "Configuration"). Those the simulator replays
 * too come from the rule they belong to: the budgets (policy/budgets.js)
 * and the hedge's settings (policy/hedge-rule.js).
 */
const defaults = {
  /** coordinator WebSocket URL, or several separated by commas or spaces (`data-coordinator`); none = cache + origin only */
  coordinator: '',
  /** join token the site's backend signed for this page (`data-token`), when its coordinators require one */
  token: '',
  /** manifest URL (`data-manifest`) */
  manifest: '/maygh-manifest.json',
  /** transparent mode: the service worker's URL (`data-worker`), served from the site's origin */
  worker: '/maygh-sw.js',
  /** transparent mode: the worker's scope (`data-worker-scope`); none: the worker's own folder */
  workerScope: '',
  /** IndexedDB byte quota in MB (`data-quota-mb`); LRU eviction above it */
  quotaMb: BUDGET_DEFAULTS.quotaMb,
  /** the site's default for its visitors (`data-maygh-mode`): `on`, `receive-only` (fetch from peers, serve none) or `off` (no peers); a visitor's optIn()/optOut() wins */
  mode: 'on',
  /** MB a visitor uploads to others per session (`data-upload-session-mb`) and per day (`data-upload-day-mb`); then receive-only */
  uploadSessionMb: BUDGET_DEFAULTS.uploadSessionMb,
  uploadDayMb: BUDGET_DEFAULTS.uploadDayMb,
  /** how long a lookup waits for `holders` (`data-lookup-timeout-ms`) */
  lookupTimeoutMs: 2000,
  /** how long a new peer connection may take to open its channel (`data-connect-timeout-ms`) */
  connectTimeoutMs: HEDGE_DEFAULTS.connectTimeoutMs,
  /** a peer transfer with no bytes for this long is abandoned (`data-stall-ms`) */
  stallMs: 4000,
  /** loads wait at most this long for the first `welcome` before going to the origin (`data-join-timeout-ms`); none when every coordinator refuses the connection */
  joinTimeoutMs: 3000,
  /**
   * hedged loads (policy/hedge-rule.js): what the site prefers when peers are slower than its origin
   * (`data-hedge`): `balanced` (render-blocking requests race the origin, images in the viewport
   * give peers the time their download from the origin would take, the rest waits for peers up to
   * `hedgeMaxMs`), `latency` (every request races: the origin is asked once peers have sent no
   * byte for twice its observed time to first byte) or `savings` (the origin only when peers give up)
   */
  hedge: HEDGE_DEFAULTS.hedge,
  /**
   * the hedge deadline is never sooner than `hedgeMinMs` nor later than `hedgeMaxMs`
   * (`data-hedge-min-ms`, `data-hedge-max-ms`; the latter also before anything is observed)
   */
  hedgeMinMs: HEDGE_DEFAULTS.hedgeMinMs,
  hedgeMaxMs: HEDGE_DEFAULTS.hedgeMaxMs,
  /** the longest counted asset bytes wait for a report while more keep coming (`data-usage-ms`; 0 = never); reports also go 1 s after the last byte, and when hidden or left */
  usageMs: 10000,
  /** holdings changes within this window go out as one `update` */
  announceDelayMs: 200,
  /** reconnect backoff: first delay and cap */
  backoffBaseMs: 500,
  backoffMaxMs: 30000
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const DEFAULTS = Object.freeze(defaults)

/** Allowed range of each numeric option. */
const RANGES = {
  quotaMb: [1, 500],
  uploadSessionMb: [0, 1e4],
  uploadDayMb: [0, 1e5],
  lookupTimeoutMs: [100, 60000],
  connectTimeoutMs: [500, 60000],
  stallMs: [200, 60000],
  joinTimeoutMs: [0, 60000],
  hedgeMinMs: [0, 60000],
  hedgeMaxMs: [0, 60000],
  usageMs: [0, 3600000]
}

/** Options with a fixed set of values: dataset key, attribute, config field, values. */
const CHOICES = /** @type {const} */ ([['mayghMode', 'maygh-mode', 'mode', MODES], ['hedge', 'hedge', 'hedge', HEDGE_PREFERENCES]])

/**
 * The coordinator URLs a `coordinator` setting lists (comma or whitespace separated).
 * @param {string} coordinator
 * @returns {string[]}
 */
export const coordinatorUrls = (coordinator) => coordinator.split(/[\s,]+/).filter(Boolean)

/**
 * @param {Record<string, string | undefined>} data a `dataset`-like object (camelCase keys)
 * @param {(msg: string) => void} [warn]
 * @returns {Readonly<typeof DEFAULTS>}
 */
export function readConfig (data, warn = () => {}) {
  const config = { ...DEFAULTS }
  for (const key of /** @type {const} */ (['coordinator', 'token', 'manifest', 'worker', 'workerScope'])) if (data[key]) config[key] = /** @type {string} */ (data[key])
  for (const [key, attr, field, values] of CHOICES) {
    const raw = data[key]
    if (!raw) continue
    if (/** @type {readonly string[]} */ (values).includes(raw)) /** @type {any} */ (config)[field] = raw
    else warn(`maygh: ignoring data-${attr}=${raw} (not ${values.join(', ')})`)
  }
  for (const [key, [min, max]] of Object.entries(RANGES)) {
    const raw = data[key]
    if (raw === undefined || raw === '') continue
    const n = Number(raw)
    if (!Number.isFinite(n)) {
      warn(`maygh: ignoring ${key}=${raw} (not a number)`)
      continue
    }
    config[key] = Math.min(max, Math.max(min, n))
    if (config[key] !== n) warn(`maygh: ${key}=${raw} clamped to ${config[key]}`)
  }
  config.hedgeMaxMs = Math.max(config.hedgeMaxMs, config.hedgeMinMs)
  return Object.freeze(config)
}
