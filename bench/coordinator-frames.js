#!/usr/bin/env node
/**
 * Coordinator frames per page view of the demo shop, in real Chromium and
 * Firefox: what one visitor's page sends the coordinator and gets back, from
 * its join to its last asset, as the page's own WebSocket sees it.
 *
 * Per engine, on a fresh stack (coordinator, demo shop, the client at its
 * defaults): a holder opens /about, then the shop, and stays; then `--views`
 * visitors, one after another, each open /about (the first view, not yet
 * under the worker) and then the shop, whose view is measured: every frame
 * of the page's coordinator socket until `Maygh.idle()`, by message type
 * (counted in the page: an init script wraps its WebSocket).
 *
 * "Before" is the same page under protocol 1, which asked one `lookup` per
 * asset: worked out from this run's own frames (each `lookup` of N assets in
 * protocol 2 would have been N lookups and N `holders` replies), not from an
 * old figure. Prints one JSON line. Run it inside the loopback-only namespace,
 * like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/coordinator-frames.js
 */
import { parseArgs } from 'node:util'
import { startStack, launchBrowser } from '../test/support/browsers.js'
import { median } from './stats.js'

const HELP = `usage: node bench/coordinator-frames.js [--views N (3)] [--engines chromium,firefox]

Prints one JSON line: per engine, the measured shop views' coordinator frames
(sent and received, by type; median over the views), the assets their lookups
named, and the protocol-1 count worked out from them, with the ratio.`

const { values } = parseArgs({ options: { views: { type: 'string', default: '3' }, engines: { type: 'string', default: 'chromium,firefox' }, help: { type: 'boolean' } } })
if (values.help) {
  console.log(HELP)
  process.exit(0)
}
const views = Number(values.views)
const engines = /** @type {('chromium' | 'firefox')[]} */ (String(values.engines).split(','))
if (!Number.isInteger(views) || views < 1 || views > 20 || !engines.every((e) => e === 'chromium' || e === 'firefox')) {
  console.error(`bench/coordinator-frames: bad flags\n${HELP}`)
  process.exit(2)
}

/**
 * In the page, before its scripts: count every frame of its WebSockets by
 * message type (Playwright's own WebSocket events are Chromium's only).
 */
function countFrames () {
  const counts = /** @type {any} */ (globalThis).__frames = { sent: {}, received: {}, lookupAssets: 0 }
  const type = (/** @type {unknown} */ data) => { try { return JSON.parse(String(data)) } catch { return null } }
  const send = WebSocket.prototype.send
  WebSocket.prototype.send = function (data) {
    const m = type(data)
    counts.sent[m?.type ?? '?'] = (counts.sent[m?.type ?? '?'] ?? 0) + 1
    if (m?.type === 'lookup') counts.lookupAssets += Array.isArray(m.hashes) ? m.hashes.length : 1
    return send.call(this, data)
  }
  const Base = WebSocket
  globalThis.WebSocket = class extends Base {
    /** @param {ConstructorParameters<typeof WebSocket>} args */
    constructor (...args) {
      super(...args)
      this.addEventListener('message', (e) => {
        const t = type(e.data)?.type ?? '?'
        counts.received[t] = (counts.received[t] ?? 0) + 1
      })
    }
  }
}

/**
 * The frames a page counted (countFrames), with the protocol-1 count worked out from them.
 * @param {import('playwright-core').Page} page
 */
async function framesOf (page) {
  const { sent, received, lookupAssets } = await page.evaluate(() => /** @type {any} */ (globalThis).__frames)
  const total = sum(sent) + sum(received)
  const lookups = sent.lookup ?? 0
  // Protocol 1: one lookup and one `holders` reply per asset instead of one per batch.
  return { sent, received, total, lookupFrames: lookups, lookupAssets, protocol1Total: total - 2 * lookups + 2 * lookupAssets }
}

/** @param {Record<string, number>} counts */
const sum = (counts) => Object.values(counts).reduce((a, b) => a + b, 0)

const out = {}
for (const kind of engines) {
  const stack = await startStack()
  const browser = await launchBrowser(kind)
  try {
    const site = stack.site.url
    const open = async () => {
      const context = await browser.newContext()
      const page = await context.newPage()
      return { context, page }
    }
    const go = async (/** @type {import('playwright-core').Page} */ page, /** @type {string} */ path) => {
      await page.goto(site + path)
      await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    }
    const holder = await open()
    await go(holder.page, '/about')
    await go(holder.page, '/')
    const measured = []
    for (let i = 0; i < views; i++) {
      const v = await open()
      await go(v.page, '/about')
      await v.page.addInitScript(countFrames)
      await go(v.page, '/')
      const stats = await v.page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
      measured.push({ ...await framesOf(v.page), peerBytes: stats.peer.bytes })
      await v.context.close()
    }
    await holder.context.close()
    const totals = measured.map((m) => m.total)
    const before = measured.map((m) => m.protocol1Total)
    out[kind] = {
      views: measured,
      medianFrames: median(totals),
      medianProtocol1Frames: median(before),
      ratio: Number((median(totals) / median(before)).toFixed(3))
    }
  } finally {
    await browser.close()
    await stack.close()
  }
}
console.log(JSON.stringify(out))
process.exit(0)
