/**
 * What a replayed URL is: its content type (the log's, or one derived from
 * its extension), how a page embeds it (image, stylesheet, script, media,
 * plain fetch), and which byte format the replay origin makes for it (a
 * valid GIF, PNG, JPEG, SVG, CSS or JS file, or pseudo-random bytes).
 */
import { CONTENT_TYPES } from '../../client/manifest.js'
import { isMediaUrl, urlExtension } from '../../sim/src/input/static-assets.js'

/**
 * Types for the extensions a 1990s log has that client/manifest.js's table
 * (the types of the files a site offloads today) does not list.
 */
const MORE_TYPES = Object.freeze({
  jpe: 'image/jpeg',
  xbm: 'image/x-xbitmap',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  mjs: 'text/javascript',
  ttf: 'font/ttf',
  otf: 'font/otf',
  m4v: 'video/mp4',
  ogv: 'video/ogg',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mpg: 'video/mpeg',
  mpeg: 'video/mpeg',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  oga: 'audio/ogg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  au: 'audio/basic',
  txt: 'text/plain; charset=utf-8',
  pdf: 'application/pdf',
  ps: 'application/postscript',
  zip: 'application/zip',
  gz: 'application/gzip'
})

/** Byte formats by content type (no parameters, lower case); anything else is pseudo-random bytes. */
const FORMATS = Object.freeze({
  'image/gif': 'gif',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/svg+xml': 'svg',
  'text/css': 'css',
  'text/javascript': 'js',
  'application/javascript': 'js',
  'application/x-javascript': 'js',
  'application/ecmascript': 'js'
})

/**
 * @typedef {'image' | 'style' | 'script' | 'media' | 'fetch'} EmbedKind how a page loads it
 * @typedef {'gif' | 'png' | 'jpeg' | 'svg' | 'css' | 'js' | 'random'} ByteFormat what its bytes are
 */

/**
 * @param {string} path a URL path
 * @param {string} [type] the log's content type ('' or undefined: derive from the extension)
 * @returns {string} the content type to serve
 */
export function typeOf (path, type) {
  if (type) return type
  const ext = urlExtension(path)
  return CONTENT_TYPES[/** @type {keyof typeof CONTENT_TYPES} */ ('.' + ext)] ??
    MORE_TYPES[/** @type {keyof typeof MORE_TYPES} */ (ext)] ?? 'application/octet-stream'
}

/**
 * @param {string} type a content type, perhaps with parameters
 * @returns {string} its essence, lower case (`text/css; charset=utf-8` → `text/css`)
 */
function essence (type) {
  return type.split(';', 1)[0].trim().toLowerCase()
}

/**
 * @param {string} path
 * @param {string} type the type served ({@link typeOf})
 * @returns {EmbedKind}
 */
export function embedKind (path, type) {
  const t = essence(type)
  if (t.startsWith('audio/') || t.startsWith('video/') || isMediaUrl(path)) return 'media'
  if (t.startsWith('image/')) return 'image'
  const format = formatOf(type)
  if (format === 'css') return 'style'
  if (format === 'js') return 'script'
  return 'fetch'
}

/**
 * @param {string} type the type served
 * @returns {ByteFormat}
 */
export function formatOf (type) {
  return FORMATS[/** @type {keyof typeof FORMATS} */ (essence(type))] ?? 'random'
}
