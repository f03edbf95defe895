/* global RTCDataChannel -- used inside page.evaluate callbacks, which run in the browser */
/**
 * Real browsers for the end-to-end tests, launched with the flags and prefs
 * that make WebRTC work on loopback here (shared/TEST-ENV.md): one browser
 * process per visitor, so each has its own IndexedDB, plus helpers the
 * scenarios share (start the whole stack, open a visitor, read its figures,
 * ask the coordinator who holds what).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, firefox } from 'playwright-core'
import WebSocket from 'ws'
import { buildClient } from '../../client/build.js'
import { startCoordinator } from '../../coordinator/src/server.js'
import { startDemoSite } from '../../demo-site/src/server.js'
import { freePort } from './redis-server.js'

/** Chromium: loopback ICE needs the flag plus a STUN server on 127.0.0.1 (the coordinator's). */
export const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--allow-loopback-in-peer-connection',
  '--disable-features=WebRtcHideLocalIpsWithMdns'
])

/** Firefox: loopback ICE, real host addresses, and nothing that phones home. */
export const FIREFOX_PREFS = Object.freeze({
  'media.peerconnection.ice.loopback': true,
  'media.peerconnection.ice.obfuscate_host_addresses': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'app.normandy.enabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'toolkit.telemetry.enabled': false,
  'browser.safebrowsing.update.enabled': false,
  'services.settings.server': 'http://127.0.0.1:9/'
})

/**
 * A fresh browser process.
 * @param {'chromium' | 'firefox'} kind
 * @returns {Promise<import('playwright-core').Browser>}
 */
export async function launchBrowser (kind) {
  if (kind === 'chromium') {
    return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: [...CHROMIUM_ARGS] })
  }
  if (kind === 'firefox') {
    return firefox.launch({
      channel: 'moz-firefox',
      executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
      firefoxUserPrefs: { ...FIREFOX_PREFS }
    })
  }
  throw new TypeError(`unknown browser kind ${kind}`)
}

/**
 * @typedef {object} Visitor
 * @property {'chromium' | 'firefox'} kind
 * @property {import('playwright-core').Browser} browser
 * @property {import('playwright-core').Page} page
 * @property {string[]} requests URLs the page requested over the network
 * @property {string[]} logs console messages and page errors
 * @property {() => Promise<any>} stats `Maygh.stats()`
 * @property {() => Promise<void>} idle `Maygh.idle()`
 * @property {() => Promise<void>} close
 */

/**
 * Launch a browser, open `url` in it and wait until the client is idle.
 * @param {'chromium' | 'firefox'} kind
 * @param {string} url
 * @param {{ init?: (page: import('playwright-core').Page) => Promise<void>, browser?: import('playwright-core').Browser }} [options]
 * @returns {Promise<Visitor>}
 */
export async function openVisitor (kind, url, options = {}) {
  const browser = options.browser ?? await launchBrowser(kind)
  const context = await browser.newContext()
  const page = await context.newPage()
  /** @type {string[]} */
  const requests = []
  /** @type {string[]} */
  const logs = []
  page.on('request', (req) => requests.push(req.url()))
  page.on('console', (msg) => logs.push(`${msg.type()}: ${msg.text()}`))
  page.on('pageerror', (err) => logs.push(`pageerror: ${err.message}`))
  await options.init?.(page)
  const visitor = {
    kind,
    browser,
    page,
    requests,
    logs,
    stats: () => page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()),
    idle: () => page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle()),
    close: async () => { await browser.close() }
  }
  await page.goto(url)
  await visitor.idle()
  return visitor
}

/**
 * `naturalWidth` of every `img[data-maygh-src]` on the page, with its URL.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<{ url: string, width: number, src: string }[]>}
 */
export async function images (page) {
  await page.waitForFunction(() => [...document.querySelectorAll('img[data-maygh-src]')].every((img) => /** @type {HTMLImageElement} */ (img).complete))
  return page.$$eval('img[data-maygh-src]', (els) => els.map((el) => {
    const img = /** @type {HTMLImageElement} */ (el)
    return { url: img.dataset.mayghSrc ?? '', width: img.naturalWidth, src: img.src }
  }))
}

/**
 * A bare coordinator client, for asking who holds what without a browser.
 * @param {string} url coordinator WebSocket URL
 */
export async function probeCoordinator (url) {
  const ws = new WebSocket(url)
  let ref = 0
  /** @type {Map<number, (msg: any) => void>} */
  const waiting = new Map()
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data))
    waiting.get(msg.ref)?.(msg)
    waiting.delete(msg.ref)
  })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  /** @param {object} msg */
  const request = (msg) => new Promise((resolve) => {
    waiting.set(++ref, resolve)
    ws.send(JSON.stringify({ v: 1, ...msg, ref }))
  })
  const welcome = await request({ type: 'join', have: [] })
  return {
    id: /** @type {any} */ (welcome).id,
    /** @type {string[]} the other live coordinators, as its `welcome` named them */
    alternates: /** @type {any} */ (welcome).alternates ?? [],
    /** @param {string} hash @returns {Promise<string[]>} holders */
    holders: async (hash) => /** @type {any} */ (await request({ type: 'lookup', hash })).peers,
    close: () => ws.close()
  }
}

/**
 * Poll `check` until it returns a truthy value (no wall-time assertion: the
 * test's own timeout is the limit).
 * @template T
 * @param {() => Promise<T>} check
 * @param {number} [everyMs]
 * @returns {Promise<T>}
 */
export async function until (check, everyMs = 100) {
  for (;;) {
    const value = await check()
    if (value) return value
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * The script tag's `data-` attributes of the end-to-end tests that check how the system behaves
 * (sharing, tampering, quarantine, reloads, shards and failover) with the origin on loopback,
 * where at the client's defaults the origin answers before a first peer connection opens: the
 * hedge's floor is raised so that peers get their turn. What the defaults do with the origin at a
 * real distance is test/e2e/demo-distance.test.js's (and bench/page-load.js's).
 */
export const LOOPBACK_CLIENT_DATA = Object.freeze({ 'hedge-min-ms': '2000' })

/**
 * The whole system on loopback: a freshly built client bundle, a coordinator
 * (with its STUN server) and the demo shop.
 * @param {{ redisUrl?: string, coordinator?: (siteOrigin: string) => Partial<import('../../coordinator/src/config.js').Config>, site?: Partial<typeof import('../../demo-site/src/server.js').DEMO_DEFAULTS> }} [options]
 *   `coordinator`: more coordinator options, given the origin the shop will be served at; `site`: the demo site's
 */
export async function startStack (options = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-e2e-'))
  const { outdir } = await buildClient({ outdir: dir })
  // The shop's port is known before the coordinator starts, so that it can be told the shop's origin.
  const sitePort = await freePort()
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, ...(options.redisUrl && { redisUrl: options.redisUrl }), ...options.coordinator?.(`http://127.0.0.1:${sitePort}`) })
  const site = await startDemoSite({ port: sitePort, host: '127.0.0.1', coordinatorUrl: coordinator.url, clientDir: outdir, clientData: LOOPBACK_CLIENT_DATA, ...options.site })
  /** @type {{ version: 1, assets: Record<string, { hash: string, size: number, type: string }> }} */
  const manifest = await (await fetch(site.url + '/maygh-manifest.json')).json()
  return {
    coordinator,
    site,
    /** the shop in marked-element mode, where a fresh visitor's first view already gets peers' bytes */
    shop: site.url + '/elements',
    manifest,
    /** @returns {Promise<{ requests: number, bytes: number, byPath: Record<string, any> }>} the site's `/origin-stats` */
    originStats: async () => (await fetch(site.url + '/origin-stats')).json(),
    close: async () => {
      await site.close()
      await coordinator.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Bytes and requests the origin served for paths under `prefix`, from `/origin-stats`.
 * @param {{ byPath: Record<string, { requests: number, bytes: number }> }} originStats
 * @param {string} [prefix]
 */
export function originImageBytes (originStats, prefix = '/img/') {
  let bytes = 0
  let requests = 0
  for (const [path, v] of Object.entries(originStats.byPath)) {
    if (!path.startsWith(prefix)) continue
    requests += v.requests
    bytes += v.bytes
  }
  return { bytes, requests }
}

/**
 * Scenario 1's run, shared by the browser-pair and Redis tests: visitor A
 * (fresh) loads the shop from the origin, then visitor B loads it and must get
 * ≥ 90 % of the image bytes from A while the origin serves < 10 % of them.
 * @param {Awaited<ReturnType<typeof startStack>>} stack
 * @param {'chromium' | 'firefox'} kindA
 * @param {'chromium' | 'firefox'} kindB
 * @param {{ init?: (page: import('playwright-core').Page) => Promise<void>, check?: (a: Visitor, b: Visitor) => Promise<void> }} [options]
 *   `init`: runs on each visitor's page before it loads; `check`: more assertions, before the visitors close
 * @returns {Promise<void>}
 */
export async function assertPeerShare (stack, kindA, kindB, { init, check } = {}) {
  /** @type {Visitor[]} */
  const visitors = []
  try {
    const a = await openVisitor(kindA, stack.shop, { init })
    visitors.push(a)
    const imgsA = await images(a.page)
    assert.ok(imgsA.length >= 30, `shop shows ${imgsA.length} images`)
    for (const img of imgsA) assert.ok(img.width > 0, `A: ${img.url} rendered`)
    const imageBytes = imgsA.reduce((n, img) => n + stack.manifest.assets[img.url].size, 0)
    const sa = await a.stats()
    assert.equal(sa.peer.count, 0, 'A, the first visitor, got nothing from peers')
    assert.ok(sa.origin.bytes >= imageBytes, 'A fetched every image from the origin')
    assert.ok(sa.held >= imgsA.length, `the coordinator acknowledged A's images (held ${sa.held})`)

    const before = await stack.originStats()
    const b = await openVisitor(kindB, stack.shop, { init })
    visitors.push(b)
    const imgsB = await images(b.page)
    for (const img of imgsB) assert.ok(img.width > 0, `B: ${img.url} rendered`)
    const sb = await b.stats()
    const after = await stack.originStats()
    assert.equal(sb.rejected, 0, 'nothing rejected')
    assert.ok(sb.peer.bytes >= 0.9 * imageBytes, `B got ${sb.peer.bytes} of ${imageBytes} image bytes from A`)
    // The whole counter (page, script, manifest, CSS and images), against the image bytes.
    assert.ok(after.bytes - before.bytes < 0.1 * imageBytes, `origin served ${after.bytes - before.bytes} bytes during B's visit (image bytes: ${imageBytes})`)
    const fetched = originImageBytes(after).requests - originImageBytes(before).requests
    assert.ok(fetched <= 0.1 * imgsA.length, `B fetched ${fetched} images from the origin`)
    assert.equal((await a.stats()).served.bytes, sb.peer.bytes, 'what A served is what B received')
    await check?.(a, b)
  } finally {
    for (const v of visitors) await v.close()
  }
}

/**
 * Open the shop at `url` in a fresh context of `browser`, its script tag
 * carrying more `data-` attributes (as the site would render them: a join
 * token, a mode, an upload budget), and wait until the client is idle.
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {{ data?: Record<string, string | undefined>, init?: (page: import('playwright-core').Page) => Promise<void> }} [options]
 *   `data`: attribute name (without `data-`) → value, those undefined left out;
 *   `init`: runs on the new page before it loads (to emulate Save-Data, say)
 */
export async function openShop (browser, url, { data = {}, init } = {}) {
  // A routed page counts as public to Chromium's Local Network Access checks: grant what a user would.
  const context = await browser.newContext({ permissions: ['local-network-access'] })
  const page = await context.newPage()
  /** @type {string[]} console messages, as `type: text` */
  const logs = []
  page.on('console', (msg) => logs.push(`${msg.type()}: ${msg.text()}`))
  const attributes = Object.entries(data).filter(([, v]) => v !== undefined).map(([k, v]) => ` data-${k}="${v}"`).join('')
  // On the context: another tab of this visitor gets the same page.
  await context.route(url, async (route) => {
    const response = await route.fetch()
    const html = await response.text()
    await route.fulfill({ response, body: html.replace(/<script src="\/maygh(-elements)?\.js"/, (tag) => tag + attributes) })
  })
  await init?.(page)
  await page.goto(url)
  await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
  return {
    page,
    context,
    logs,
    /** @returns {Promise<any>} Maygh.stats() */
    stats: () => page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()),
    close: () => context.close()
  }
}

/**
 * {@link openShop} with a join token (none: the page as served).
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {string | undefined} token
 */
export const openWithToken = (browser, url, token) => openShop(browser, url, { data: { token } })

/**
 * Make a visitor's page a poisoning peer: from now on it flips a byte in the
 * first binary frame of each reply it serves over a data channel, after its
 * own pre-serve verification.
 * @param {import('playwright-core').Page} page
 * @param {number} [size] only replies of this many bytes (none: every reply)
 */
export async function corruptReplies (page, size) {
  await page.evaluate((size) => {
    const send = RTCDataChannel.prototype.send
    let corrupt = false
    RTCDataChannel.prototype.send = function (/** @type {any} */ data) {
      if (typeof data === 'string') {
        const msg = JSON.parse(data)
        if (msg.t === 'ok') corrupt = size === null || msg.size === size
      } else if (corrupt) {
        corrupt = false
        const copy = new Uint8Array(data.byteLength)
        copy.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
        copy[copy.length >> 1] ^= 0x5a
        data = copy
      }
      return send.call(this, data)
    }
  }, size ?? null)
}
