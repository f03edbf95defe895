/**
 * The browser bundles `npm run build` writes to `dist/` (and `npm pack`
 * ships): file → entry module in `client/src/`.
 *
 *   maygh.js           the script tag of transparent mode (maygh.js → transparent.js)
 *   maygh-sw.js        its service worker (worker.js)
 *   maygh-elements.js  the script tag of marked-element mode (maygh-elements.js → elements.js)
 *
 * Gzip budgets: 10 KB for the default script tag and for the worker; 12 KB
 * for marked-element mode, whose one script does the worker's job too (the
 * asset store, the manifest, the hedged load path).
 */
export const GZIP_BUDGETS = Object.freeze({
  'maygh.js': 10240,
  'maygh-sw.js': 10240,
  'maygh-elements.js': 12288
})
export const BUNDLES = Object.freeze({
  'maygh.js': 'maygh.js',
  'maygh-sw.js': 'worker.js',
  'maygh-elements.js': 'maygh-elements.js'
})
