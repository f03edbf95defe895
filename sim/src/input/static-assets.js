/**
 * Which requests peers could serve. The Maygh client serves only a page's
 * named static assets (images, CSS, JS, fonts, media), never its HTML pages
 * or CGI output, so by default a log's request counts only when its URL's
 * extension, or the content type the log gives for it, says it is one of
 * those. `--assets all` counts every successful GET; any other `--assets`
 * value is a regular expression over the URL. The lists below are the one
 * place the extensions and content types are written (docs/simulator.md,
 * "What peers may serve", prints them).
 */

/** Extensions (lower case, without the dot) of static assets, by kind. */
export const STATIC_EXTENSIONS = Object.freeze({
  // xbm: the X bitmaps 1990s pages inlined as icons (the EPA log has 912)
  images: Object.freeze(['gif', 'jpg', 'jpeg', 'jpe', 'png', 'apng', 'webp', 'avif', 'jxl', 'svg', 'ico', 'bmp', 'tif', 'tiff', 'xbm']),
  styles: Object.freeze(['css']),
  scripts: Object.freeze(['js', 'mjs']),
  fonts: Object.freeze(['woff', 'woff2', 'ttf', 'otf', 'eot']),
  // au: the 1990s web's audio clips
  media: Object.freeze(['mp4', 'm4v', 'webm', 'ogv', 'mov', 'avi', 'mpg', 'mpeg', 'mp3', 'm4a', 'aac', 'oga', 'ogg', 'opus', 'flac', 'wav', 'au'])
})

/**
 * Content types of static assets, by kind as the extensions are: an entry
 * ending in `/` is a whole family (`image/`), any other an exact type.
 */
export const STATIC_CONTENT_TYPES = Object.freeze({
  images: Object.freeze(['image/']),
  styles: Object.freeze(['text/css']),
  scripts: Object.freeze(['text/javascript', 'application/javascript', 'application/x-javascript', 'application/ecmascript']),
  fonts: Object.freeze(['font/', 'application/font-woff', 'application/x-font-woff', 'application/x-font-ttf', 'application/x-font-otf',
    'application/font-sfnt', 'application/vnd.ms-fontobject']),
  media: Object.freeze(['audio/', 'video/'])
})

const EXTENSIONS = new Set(Object.values(STATIC_EXTENSIONS).flat())
const MEDIA_EXTENSIONS = new Set(STATIC_EXTENSIONS.media)
/** the kinds a page needs before it renders, which the client's hedge rule races with the origin (policy/hedge-rule.js) */
const BLOCKING_KINDS = /** @type {const} */ (['styles', 'scripts', 'fonts'])
const BLOCKING_EXTENSIONS = new Set(BLOCKING_KINDS.flatMap((kind) => STATIC_EXTENSIONS[kind]))
const CONTENT_TYPES = Object.values(STATIC_CONTENT_TYPES).flat()
const BLOCKING_CONTENT_TYPES = BLOCKING_KINDS.flatMap((kind) => STATIC_CONTENT_TYPES[kind])

/**
 * Extensions of pages: what a browser navigates to (`''`: a directory, or a
 * route without one). A GET of one is a page view; downloads (`.txt`, `.pdf`,
 * `.zip`, …) are neither pages nor assets.
 */
export const PAGE_EXTENSIONS = Object.freeze(['', 'html', 'htm', 'shtml', 'xhtml', 'php', 'asp', 'aspx', 'jsp', 'cgi', 'pl'])
const PAGES = new Set(PAGE_EXTENSIONS)

/**
 * @param {string} url a log's URL: a path, perhaps with a query, or absolute
 * @returns {string} its last path segment's extension, lower case ('' if none)
 */
export function urlExtension (url) {
  let end = url.length
  const q = url.search(/[?#;]/)
  if (q !== -1) end = q
  const slash = url.lastIndexOf('/', end - 1)
  const dot = url.lastIndexOf('.', end - 1)
  if (dot <= slash) return ''
  return url.slice(dot + 1, end).toLowerCase()
}

/**
 * @param {string} url
 * @returns {boolean} whether the URL's extension is a static asset's (case and query string ignored)
 */
export function isStaticUrl (url) {
  return EXTENSIONS.has(urlExtension(url))
}

/**
 * @param {string} url
 * @returns {boolean} whether the URL is a page's: a browser's navigation, not an asset a page embeds
 */
export function isPageUrl (url) {
  return PAGES.has(urlExtension(url))
}

/**
 * @param {string} url
 * @returns {boolean} whether the URL is audio or video by its extension: a browser's `<audio>` and
 *   `<video>` ask for it with `Range`, which the client's worker leaves to the origin
 */
export function isMediaUrl (url) {
  return MEDIA_EXTENSIONS.has(urlExtension(url))
}

/**
 * @param {string} url
 * @returns {boolean} whether the URL is a style, a script or a font by its extension: what a page
 *   needs before it renders, which the client's hedge rule races with the origin (policy/hedge-rule.js)
 */
export function isBlockingUrl (url) {
  return BLOCKING_EXTENSIONS.has(urlExtension(url))
}

/**
 * @param {string} contentType e.g. `image/png`, `text/css; charset=utf-8`
 * @returns {boolean} whether it is a static asset's content type
 */
export function isStaticContentType (contentType) {
  return typeIn(contentType, CONTENT_TYPES)
}

/**
 * @param {string} contentType
 * @returns {boolean} whether it is a style's, a script's or a font's (`isBlockingUrl` by content type)
 */
export function isBlockingContentType (contentType) {
  return typeIn(contentType, BLOCKING_CONTENT_TYPES)
}

/**
 * @param {string} contentType
 * @returns {boolean} whether it is audio or video (`isMediaUrl` by content type)
 */
export function isMediaContentType (contentType) {
  return typeIn(contentType, STATIC_CONTENT_TYPES.media)
}

/**
 * @param {string} contentType
 * @param {readonly string[]} list families (ending in `/`) and exact types
 * @returns {boolean} whether the type, parameters, case and spaces ignored, is one of the list's
 */
function typeIn (contentType, list) {
  const semi = contentType.indexOf(';')
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
  return list.some((entry) => entry.endsWith('/') ? type.startsWith(entry) : type === entry)
}

/**
 * @typedef {object} AssetRule how `--assets` reads
 * @property {'static' | 'all' | 'regex'} kind
 * @property {RegExp | null} regex for kind 'regex'
 * @property {string} describe for people: what counts
 */

/**
 * Reads an `--assets` value: `static` (the default), `all`, or a regular
 * expression. The caller has validated it (config.js).
 * @param {string} assets
 * @returns {AssetRule}
 */
export function assetRule (assets) {
  if (assets === 'static') return { kind: 'static', regex: null, describe: 'static assets (images, CSS, JS, fonts, media) by extension or content type' }
  if (assets === 'all') return { kind: 'all', regex: null, describe: 'every successful GET (--assets all)' }
  return { kind: 'regex', regex: new RegExp(assets), describe: `URLs matching --assets ${assets}` }
}

/**
 * @typedef {{ requests: number, bytes: number }} Tally
 * @typedef {{ rule: string } & Tally} Counted requests counted as ones peers could serve
 * @typedef {Tally & { notServable: Tally, notAsset: Tally }} LeftOut requests left to the origin, and why
 */

/**
 * Which requests were counted as ones peers could serve, and which were left
 * to the origin, in requests and bytes. Every request stays in the totals:
 * savings are measured against all the bytes the log says the origin sent.
 * @param {Record<string, any>} report what toReport (run.js) returns
 * @returns {{ counted: Counted, leftOut: LeftOut }}
 */
export function countedAndLeftOut (report) {
  const input = report.input ?? {}
  const left = { requests: report.requests - report.assetRequests, bytes: report.bytes - report.assetBytes }
  // the trace reader knows why each request was left out; the generator writes assets and the pages that begin page views
  const why = input.leftOut ?? { notServable: { requests: 0, bytes: 0 }, notAsset: left }
  const rule = input.kind === 'synthetic' ? 'static assets (the generator writes images, CSS and JS, and the page requests that begin page views)' : input.assetRule ?? ''
  return {
    counted: { rule, requests: report.assetRequests, bytes: report.assetBytes },
    leftOut: { ...left, notServable: why.notServable, notAsset: why.notAsset }
  }
}
