/* global document, window, HTMLElement */
/**
 * The HTML of one replayed page view: the Maygh client's script tag (or
 * none, for the same replay without Maygh), then every asset the log's
 * client fetched after that view, embedded as a page would — `<img>`,
 * stylesheet `<link>`, async `<script>`; audio and video as a `fetch` with
 * `Range: bytes=0-` (what a `<video>` asks for: the client's worker leaves
 * it to the network), other files as a plain `fetch` — each marked with
 * `data-replay="<kind>"`, then an HTML comment that pads the page to the
 * size the log gives its HTML.
 *
 * `window.replayDone` resolves once every marked element has loaded or
 * failed, with each one's outcome and resource timing ({@link ReplayResult}).
 */
import { fillerText } from './asset-bytes.js'

/**
 * @typedef {object} AssetOutcome
 * @property {string} url absolute
 * @property {string} kind image, style, script, media or fetch
 * @property {boolean} ok loaded (an image decoded, a fetch answered 2xx and read to the end)
 * @property {number} at ms since navigation when it was done
 * @property {number | null} start resource timing: startTime (null when the browser kept no entry)
 * @property {number | null} duration resource timing: responseEnd − startTime
 * @property {number | null} transferSize resource timing: 0 when served by the worker or the HTTP cache
 * @property {number | null} bodySize resource timing: decodedBodySize
 * @typedef {{ ms: number, assets: AssetOutcome[] }} ReplayResult
 */

/**
 * The page's one inline script (serialized into the page): counts the
 * marked elements' load and error events (a capturing listener on the
 * document, set before any element exists, so none is missed), starts the
 * fetches of media and other files, and resolves `window.replayDone`.
 * @param {number} expected how many elements the page marks
 */
function replayRunner (expected) {
  const w = /** @type {any} */ (window)
  performance.setResourceTimingBufferSize(Math.max(250, 2 * expected + 50))
  /** @type {{ el: Element, ok: boolean, at: number }[]} */
  const marks = []
  const seen = new Set()
  let finish = (/** @type {unknown} */ _) => {}
  w.replayDone = new Promise((resolve) => { finish = resolve })
  const settle = () => {
    const timings = new Map()
    for (const e of /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType('resource'))) {
      if (!timings.has(e.name)) timings.set(e.name, e)
    }
    finish({
      ms: performance.now(),
      assets: marks.map(({ el, ok, at }) => {
        const url = new URL(el.getAttribute('src') ?? el.getAttribute('href') ?? '', document.baseURI).href
        const t = timings.get(url)
        return { url, kind: el.getAttribute('data-replay'), ok, at, start: t ? t.startTime : null, duration: t ? t.responseEnd - t.startTime : null, transferSize: t ? t.transferSize : null, bodySize: t ? t.decodedBodySize : null }
      })
    })
  }
  const mark = (/** @type {Element} */ el, /** @type {boolean} */ ok) => {
    if (seen.has(el)) return
    seen.add(el)
    marks.push({ el, ok, at: performance.now() })
    if (marks.length === expected) settle()
  }
  for (const type of ['load', 'error']) {
    document.addEventListener(type, (e) => {
      const el = e.target
      if (el instanceof HTMLElement && el.dataset.replay && el.dataset.replay !== 'media' && el.dataset.replay !== 'fetch') mark(el, type === 'load')
    }, true)
  }
  document.addEventListener('DOMContentLoaded', () => {
    for (const el of document.querySelectorAll('[data-replay=media],[data-replay=fetch]')) {
      const headers = el.getAttribute('data-replay') === 'media' ? { Range: 'bytes=0-' } : undefined
      fetch(el.getAttribute('href') ?? '', { headers })
        .then(async (res) => { await res.arrayBuffer(); mark(el, res.ok) })
        .catch(() => mark(el, false))
    }
  })
  if (expected === 0) settle()
}
// Standard style has no semicolons, so only each line's indentation can go.
const RUNNER = replayRunner.toString().replace(/\n\s+/g, '\n')

/**
 * @param {string} s
 * @returns {string} `s` safe in HTML text and in double-quoted attribute values
 */
export function escapeHtml (s) {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * @typedef {object} EmbeddedAsset
 * @property {string} href the URL path as the page writes it
 * @property {import('./asset-kinds.js').EmbedKind} kind
 */

/**
 * One asset's markup.
 * @param {EmbeddedAsset} asset
 * @returns {string}
 */
function embed ({ href, kind }) {
  const url = escapeHtml(href)
  switch (kind) {
    case 'image': return `<img src="${url}" alt="" data-replay="image">`
    case 'style': return `<link rel="stylesheet" href="${url}" data-replay="style">`
    case 'script': return `<script src="${url}" async data-replay="script"></script>`
    default: return `<a hidden href="${url}" data-replay="${kind}"></a>`
  }
}

/**
 * The page, exactly `bytes` long when its markup is shorter.
 * @param {object} o
 * @param {string} o.path the view's path (the seed of its padding, and its title)
 * @param {number} o.bytes the size the log gives its HTML (0: none)
 * @param {EmbeddedAsset[]} o.assets in the order the log's client fetched them
 * @param {{ src: string, data: Record<string, string> } | null} o.client the client's script tag (`data-` attributes without `data-`), or null for none
 * @returns {Buffer}
 */
export function renderView ({ path, bytes, assets, client }) {
  const tag = client && `<script src="${escapeHtml(client.src)}"${Object.entries(client.data).map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`).join('')} async></script>\n`
  const markup = Buffer.from('<!doctype html>\n<html><head><meta charset="utf-8"><title>' + escapeHtml(path) + '</title>' +
    '<link rel="icon" href="data:,">\n' + (tag ?? '') + `<script>(${RUNNER})(${assets.length})</script>\n</head><body>\n` +
    assets.map(embed).join('\n') + '\n')
  const tail = Buffer.from('</body></html>\n')
  const room = bytes - markup.length - tail.length
  const open = '<!--'
  const close = '-->\n'
  let pad = Buffer.alloc(0)
  if (room >= open.length + close.length) {
    pad = Buffer.concat([Buffer.from(open), fillerText(path, room - open.length - close.length), Buffer.from(close)])
  } else if (room > 0) {
    pad = Buffer.alloc(room, 0x0a)
  }
  return Buffer.concat([markup, pad, tail])
}
