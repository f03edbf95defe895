/**
 * The package's module entry (`import … from 'maygh'`), for sites that bundle
 * their scripts: the client started from code instead of a script tag.
 *
 *   import { start } from 'maygh'
 *   const maygh = start({ coordinator: 'wss://peers.example.com' })
 *
 * Options are the script tag's `data-` attributes in camelCase (README,
 * "Client configuration": `coordinator`, `token`, `hedgeMinMs`, …), `mode` for
 * `data-maygh-mode`. Each start returns the `Maygh` API (also
 * `globalThis.Maygh`); a page starts one client, later calls return it.
 * Transparent mode's worker is still a file the site serves: copy
 * `maygh/dist/maygh-sw.js` to where `worker` points (`/maygh-sw.js`).
 */
import { readConfig } from './config.js'
import { startTransparent } from './transparent.js'
import { startElements as elements } from './elements.js'

/**
 * @typedef {Partial<Record<Exclude<keyof typeof import('./config.js').DEFAULTS, 'mode'>, string | number>> & { mode?: string }} Options
 */

/** @param {Options} options */
function configOf ({ mode, ...options }) {
  const data = Object.entries({ ...options, mayghMode: mode }).filter(([, v]) => v !== undefined && v !== null)
  return readConfig(Object.fromEntries(data.map(([k, v]) => [k, String(v)])), console.warn)
}

/**
 * Transparent mode: the site's ordinary markup, answered by the service worker.
 * @param {Options} [options]
 */
export const start = (options = {}) => startTransparent(configOf(options))

/**
 * Marked-element mode (`<img data-maygh-src>`), for sites that cannot run a service worker.
 * @param {Options} [options]
 */
export const startElements = (options = {}) => elements(configOf(options))
