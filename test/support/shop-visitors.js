/**
 * Visitors of the demo shop for the coordinator-tier tests: many in one
 * browser process, each in a context of its own (so its own IndexedDB and its
 * own Maygh client), each sent to the coordinator(s) the test names by
 * rewriting the page's `data-coordinator` on its way in (`page.route`): the
 * product has no test hook for it, and needs none.
 */
import assert from 'node:assert/strict'
import { LOOPBACK_CLIENT_DATA, images } from './browsers.js'

/**
 * @typedef {object} ShopVisitor
 * @property {import('playwright-core').BrowserContext} context
 * @property {import('playwright-core').Page} page
 * @property {string[]} logs console messages and page errors
 * @property {() => Promise<any>} stats `Maygh.stats()`
 * @property {() => Promise<void>} idle `Maygh.idle()`
 * @property {() => Promise<void>} visit go to the shop (again) and wait until the client is idle
 * @property {() => Promise<void>} close closes its context (not the browser)
 */

/**
 * Serve `shopUrl`'s page to this page with `data-coordinator` naming `coordinators`.
 * @param {import('playwright-core').Page} page
 * @param {string} shopUrl
 * @param {string[]} coordinators WebSocket URLs, as the attribute lists them
 */
export async function routeCoordinators (page, shopUrl, coordinators) {
  await page.route(shopUrl, async (route) => {
    const response = await route.fetch()
    const html = await response.text()
    const attribute = /data-coordinator="[^"]*"/
    if (!attribute.test(html)) {
      await route.abort()
      throw new Error('the shop page has no data-coordinator attribute to rewrite')
    }
    // The compose topology's shop runs at the client's defaults: these visitors test the tier on one machine.
    const data = Object.entries(LOOPBACK_CLIENT_DATA).map(([k, v]) => ` data-${k}="${v}"`).join('')
    await route.fulfill({ response, body: html.replace(attribute, `data-coordinator="${coordinators.join(',')}"${data}`) })
  })
}

/**
 * A new visitor in `browser`, whose shop page names `coordinators`.
 * @param {import('playwright-core').Browser} browser
 * @param {string} shopUrl
 * @param {string[]} coordinators
 * @param {{ visit?: boolean, init?: (page: import('playwright-core').Page) => Promise<void> }} [options]
 *   `visit` (default true): open the shop and wait until idle; `init`: runs before that
 * @returns {Promise<ShopVisitor>}
 */
export async function openShopVisitor (browser, shopUrl, coordinators, { visit = true, init } = {}) {
  // A page fulfilled by page.route has no address space of its own, so Chromium's
  // Local Network Access checks take it for a public page and block its
  // WebSocket to the loopback coordinator (net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS);
  // the permission is what a user would grant. Firefox has no such check.
  const chromium = browser.browserType().name() === 'chromium'
  const context = await browser.newContext(chromium ? { permissions: ['local-network-access'] } : {})
  const page = await context.newPage()
  /** @type {string[]} */
  const logs = []
  page.on('console', (msg) => logs.push(`${msg.type()}: ${msg.text()}`))
  page.on('pageerror', (err) => logs.push(`pageerror: ${err.message}`))
  await routeCoordinators(page, shopUrl, coordinators)
  await init?.(page)
  /** @type {ShopVisitor} */
  const visitor = {
    context,
    page,
    logs,
    stats: () => page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()),
    idle: () => page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle()),
    visit: async () => {
      await page.goto(shopUrl)
      await visitor.idle()
    },
    close: () => context.close()
  }
  if (visit) await visitor.visit()
  return visitor
}

/**
 * Every `img[data-maygh-src]` of an idle page shows, through the client: its
 * `src` is a blob URL of verified bytes (a load that failed everywhere would
 * have fallen back to the plain URL) and it decoded (naturalWidth > 0). The
 * client counted no failed load and the page threw nothing.
 * @param {ShopVisitor} visitor
 * @param {string} who for messages
 * @returns {Promise<{ images: { url: string, width: number, src: string }[], stats: any }>}
 */
export async function assertEveryImageShows (visitor, who) {
  const imgs = await images(visitor.page)
  assert.ok(imgs.length > 0, `${who}: the page has images`)
  for (const img of imgs) {
    assert.ok(img.src.startsWith('blob:'), `${who}: ${img.url} loaded through the client (src ${img.src})`)
    assert.ok(img.width > 0, `${who}: ${img.url} rendered`)
  }
  const stats = await visitor.stats()
  assert.equal(stats.failed, 0, `${who}: no load failed (${JSON.stringify(stats.errors)})`)
  assert.deepEqual(visitor.logs.filter((l) => l.startsWith('pageerror')), [], `${who}: no page errors`)
  return { images: imgs, stats }
}

/**
 * Bytes of the shop's images, by the manifest.
 * @param {{ url: string }[]} imgs
 * @param {{ assets: Record<string, { size: number }> }} manifest
 */
export function imageBytes (imgs, manifest) {
  return imgs.reduce((n, img) => n + manifest.assets[img.url].size, 0)
}

/**
 * Runs in a page (as an init script): keeps a timeline of the client's
 * coordinator connections in `globalThis.mayghTestTimeline` — each socket
 * opened, closed (code, reason), and each `welcome`, `move` and `error` with
 * the ports its `alternates` name — for failure messages. It watches the
 * page's WebSocket; it changes nothing the client sends or receives.
 */
export function recordCoordinatorTimeline () {
  const w = /** @type {any} */ (globalThis)
  /** @type {string[]} */
  const timeline = w.mayghTestTimeline = []
  const t0 = Date.now()
  const port = (/** @type {unknown} */ url) => String(url).split(':').pop()
  const Native = WebSocket
  w.WebSocket = class extends Native {
    /** @param {string | URL} url @param {string | string[]} [protocols] */
    constructor (url, protocols) {
      super(url, protocols)
      const at = port(url)
      timeline.push(`${Date.now() - t0} ms: open ${at}`)
      this.addEventListener('close', (e) => timeline.push(`${Date.now() - t0} ms: closed ${at} ${e.code} ${e.reason}`))
      this.addEventListener('message', (e) => {
        let m
        try { m = JSON.parse(e.data) } catch { return }
        if (['welcome', 'move', 'error'].includes(m.type)) timeline.push(`${Date.now() - t0} ms: ${at} ${m.type} ${m.code ?? ''} alternates ${(m.alternates ?? []).map(port).join(',')}`)
      })
    }
  }
}
