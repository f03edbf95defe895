/**
 * The synthetic Etsy week's parameters: one documented defaults object
 * (docs/simulator.md, "The synthetic Etsy week", says why each default) and
 * its validation.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** site-wide assets are tracked in a 32-bit mask per client */
export const MAX_SITE_ASSETS = 32

/** Documented defaults of the generator (docs/simulator.md). */
const etsyDefaults = {
  /** days of trace */
  days: 7,
  /** expected requests over all days */
  requests: 20_000_000,
  /** seed of every random choice */
  seed: 1,
  /** first second of the trace: Monday 5 March 2012, 00:00 US Eastern */
  start: Date.UTC(2012, 2, 5, 5) / 1000,
  /** hours from UTC of the audience's clock, for the cycles */
  utcOffset: -5,
  /** Zipf exponent of catalog popularity */
  alpha: 1.1,
  /** catalog objects per expected request (a catalog of 3 M photos for 20 M requests) */
  catalogPerRequest: 0.15,
  /** share of requests for a photo requested exactly once in the trace */
  oneTimeShare: 0.1,
  /** site-wide assets: the page templates' CSS and JS bundles (render-blocking: `FLAG_BLOCKING`) */
  siteAssets: 6,
  /** site-wide assets a cold page load fetches (one page template's bundle) */
  siteAssetsPerLoad: 2,
  /** probability a returning visitor's HTTP cache has lost the site assets */
  siteAssetRefetch: 0.2,
  /** median photo size, bytes */
  sizeMedian: 12000,
  /** sigma of log(size) of the lognormal body */
  sizeSigma: 1.0,
  /** share of objects in the Pareto tail */
  tailShare: 0.02,
  /** Pareto shape of the tail */
  tailAlpha: 1.5,
  /** smallest tail object, bytes */
  tailMin: 100_000,
  /** largest object, bytes */
  sizeMax: 4 * 1024 * 1024,
  /** median size of a site-wide asset, bytes */
  siteAssetMedian: 40_000,
  /** fewest and most requests in a session */
  sessionMin: 6,
  sessionMax: 16,
  /** fewest and most assets a page view asks the origin for (its HTTP-cache misses) */
  pageAssetsMin: 2,
  pageAssetsMax: 6,
  /** bytes of a page request (0: the static-content log does not hold the pages, which another host served) */
  pageBytes: 0,
  /** median seconds from a page request to its first asset, and between a page's assets (lognormal): loaded together */
  assetGapMedian: 0.5,
  /** median seconds between a page view's last asset and the next page request (lognormal): reading time */
  pageGapMedian: 20,
  /** sigma of log(gap), both gaps */
  gapSigma: 1.0,
  /** share of sessions by returning visitors */
  returnShare: 0.4,
  /** heavy clients (crawlers, sellers watching their shops, office proxies) */
  heavyClients: 20,
  /** share of sessions that belong to heavy clients */
  heavyShare: 0.01,
  /** a heavy client's session is this many times longer */
  heavyFactor: 10,
  /** daily cycle: rate ∝ 1 + dailyAmplitude·cos(2π(hour − peakHour)/24) */
  dailyAmplitude: 0.5,
  peakHour: 21,
  /** weekly cycle: rate ∝ 1 + weeklyAmplitude·cos(2π(day − peakDay)/7), day 0 = Sunday */
  weeklyAmplitude: 0.1,
  peakDay: 0
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const ETSY_DEFAULTS = Object.freeze(etsyDefaults)

/** @typedef {typeof ETSY_DEFAULTS} EtsyParams */

/**
 * Checks generator parameters; throws MGH_SIM_ERR_BAD_VALUE.
 * @param {Partial<EtsyParams>} overrides
 * @returns {Readonly<EtsyParams>}
 */
export function resolveEtsyParams (overrides = {}) {
  /** @type {Record<string, number>} */
  const p = { ...ETSY_DEFAULTS }
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) continue
    if (!(k in ETSY_DEFAULTS)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `unknown generator parameter ${k}`)
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `${k} must be a finite number`)
    p[k] = v
  }
  const fail = (/** @type {string} */ why) => { throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, why) }
  if (!(p.days > 0 && p.days <= 366)) fail('--days must be > 0 and ≤ 366')
  if (!(p.requests >= 1 && p.requests <= 2e9)) fail('--requests must be from 1 to 2e9')
  if (!(p.alpha > 0 && p.alpha < 5)) fail('--alpha must be in (0, 5)')
  for (const k of ['oneTimeShare', 'siteAssetRefetch', 'tailShare', 'returnShare', 'heavyShare', 'dailyAmplitude', 'weeklyAmplitude']) {
    if (!(p[k] >= 0 && p[k] <= 1)) fail(`${k} must be between 0 and 1`)
  }
  if (p.dailyAmplitude >= 1 || p.weeklyAmplitude >= 1) fail('cycle amplitudes must be below 1')
  if (!(Number.isInteger(p.sessionMin) && p.sessionMin >= 1 && p.sessionMax >= p.sessionMin)) fail('need 1 ≤ sessionMin ≤ sessionMax')
  if (!(Number.isInteger(p.siteAssets) && p.siteAssets >= 0 && p.siteAssets <= MAX_SITE_ASSETS)) fail(`siteAssets must be an integer from 0 to ${MAX_SITE_ASSETS}`)
  if (!(p.siteAssetsPerLoad >= 0 && p.siteAssetsPerLoad <= p.siteAssets)) fail('siteAssetsPerLoad must be ≤ siteAssets')
  if (!(p.sessionMin >= p.siteAssetsPerLoad)) fail('sessionMin must be ≥ siteAssetsPerLoad')
  if (!(Number.isInteger(p.heavyClients) && p.heavyClients >= 0)) fail('heavyClients must be an integer ≥ 0')
  if (p.heavyClients === 0 && p.heavyShare > 0) p.heavyShare = 0
  if (!(p.sizeMedian >= 1 && p.siteAssetMedian >= 1 && p.tailMin >= 1 && p.sizeMax >= p.tailMin && p.tailAlpha > 0)) fail('sizes must be positive, sizeMax ≥ tailMin')
  if (!(p.assetGapMedian > 0 && p.pageGapMedian > 0 && p.gapSigma >= 0 && p.sizeSigma >= 0)) fail('assetGapMedian and pageGapMedian must be > 0, sigmas ≥ 0')
  if (!(Number.isInteger(p.pageAssetsMin) && p.pageAssetsMin >= 1 && p.pageAssetsMax >= p.pageAssetsMin)) fail('need 1 ≤ pageAssetsMin ≤ pageAssetsMax')
  if (!(p.pageBytes >= 0)) fail('pageBytes must be ≥ 0')
  if (!(p.catalogPerRequest > 0)) fail('catalogPerRequest must be > 0')
  if (!(p.heavyFactor >= 1)) fail('heavyFactor must be ≥ 1')
  return Object.freeze(/** @type {EtsyParams} */ (p))
}
