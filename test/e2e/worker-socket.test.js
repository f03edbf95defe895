/* global WebSocket, ServiceWorker -- used inside page callbacks, which run in the browser */
/**
 * The worker's own coordinator socket (client/src/worker-socket.js), in real
 * browsers: once a visitor's first page has joined, its worker keeps a socket
 * of its own, joined as a fetch-only peer; the visitor's next page sends its
 * first lookup through it, not over its own socket, and its images come from
 * the holder; before the page's script runs, the worker looks up what the
 * page asked for first and invites the holder to make the offer, which the
 * page answers (it makes none); the worker's peer holds nothing (its own
 * socket's frames held back a second, as a distant coordinator's would be: on
 * loopback either socket may join first). A holder that ignores invitations
 * (a client from before them) is offered to by the page itself. With that
 * socket gone (the coordinator restarted), the next page's lookups go over
 * its own socket, and its images still come from the holder.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../../client/build.js'
import { buildManifest } from '../../client/manifest.js'
import { startCoordinator } from '../../coordinator/src/server.js'
import { DEFAULT_PUBLIC_DIR, ensureGenerated } from '../../demo-site/src/images.js'
import { launchBrowser, until } from '../support/browsers.js'
import { startStaticSite } from '../support/static-site.js'

const IMAGES = ['/img/p01.png', '/img/p02.png', '/img/p04.png', '/img/p05.png']
/** How late a page's own socket sends, where the test is which socket carries its first lookup (ms). */
const FAR_MS = 1000

/** @type {string} */
let dir
/** @type {Awaited<ReturnType<typeof startCoordinator>>} */
let coordinator
/** @type {Awaited<ReturnType<typeof startStaticSite>>} */
let site

/** @param {string} url */
const shop = (url) => `<!doctype html><title>Shop</title>
<script src="/maygh.js" data-coordinator="${url}" data-hedge-min-ms="10000" async></script>
${IMAGES.map((src) => `<img src="${src}" alt="">`).join('\n')}`

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maygh-worker-socket-'))
  await buildClient({ outdir: dir })
  await ensureGenerated()
  await mkdir(join(dir, 'img'))
  for (const path of IMAGES) await copyFile(join(DEFAULT_PUBLIC_DIR, path), join(dir, path))
  coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  // The origin here is loopback, faster than any peer: a hedge deadline of seconds lets peers serve.
  await writeFile(join(dir, 'index.html'), shop(coordinator.url))
  await writeFile(join(dir, 'about.html'), `<!doctype html><title>About</title><script src="/maygh.js" data-coordinator="${coordinator.url}" data-hedge-min-ms="10000" async></script><p>About.</p>`)
  await writeFile(join(dir, 'maygh-manifest.json'), JSON.stringify(await buildManifest(dir)))
  site = await startStaticSite(dir)
})
after(async () => {
  await site?.close()
  await coordinator?.close()
  await rm(dir, { recursive: true, force: true })
})

/**
 * A fresh visitor whose pages record what their own coordinator socket sent
 * and what their worker said of its socket (`via`). With `farMs`, what a
 * page's own socket sends leaves only that long after the socket was made, as
 * to a distant coordinator (its worker's socket, made at the navigation, is not
 * held): on loopback either socket may join first, and which one carries the
 * first lookup would be a race.
 * With `old`, its pages drop every invitation they are handed, as a client
 * from before invitations ignores one.
 * @param {'chromium' | 'firefox'} kind
 * @param {{ farMs?: number, old?: boolean }} [o]
 */
async function visitor (kind, { farMs = 0, old = false } = {}) {
  const browser = await launchBrowser(kind)
  const tab = await (await browser.newContext()).newPage()
  await tab.addInitScript(({ farMs, old }) => {
    // `sent`: the types of the frames its own socket sent (`connect+offer` for an offer); `toWorker`:
    // those it sent through its worker's (`lookup+offers` for a lookup carrying offers); `invited`: the
    // worker's `invited` messages.
    const seen = { sent: /** @type {string[]} */ ([]), via: /** @type {(string | null)[]} */ ([]), toWorker: /** @type {string[]} */ ([]), invited: /** @type {any[]} */ ([]) }
    /** @param {any} m a coordinator frame */
    const kind = (m) => m.type + (m.signal?.sdp?.type === 'offer' ? '+offer' : '') + (m.offers?.length ? '+offers' : '')
    const post = ServiceWorker.prototype.postMessage
    ServiceWorker.prototype.postMessage = function (/** @type {any} */ m, /** @type {any} */ ...rest) {
      if (m?.maygh === 'frame') seen.toWorker.push(kind(m.msg))
      return post.call(this, m, ...rest)
    }
    Object.defineProperty(globalThis, '__seen', { value: seen })
    const Native = WebSocket
    globalThis.WebSocket = class extends Native {
      /** @type {any[] | null} frames held until farMs after the socket was made, in order */
      #held = farMs ? [] : null
      /** @param {string | URL} url @param {string | string[]} [protocols] */
      constructor (url, protocols) {
        super(url, protocols)
        // Heard before the client's own listener, which it then never reaches.
        if (old) {
          super.addEventListener('message', (e) => {
            try { if (JSON.parse(String(e.data)).signal?.invite === true) e.stopImmediatePropagation() } catch {}
          })
        }
        if (farMs) {
          setTimeout(() => {
            for (const data of /** @type {any[]} */ (this.#held)) if (this.readyState === Native.OPEN) super.send(data)
            this.#held = null
          }, farMs)
        }
      }

      /** @param {any} data */
      send (data) {
        try { seen.sent.push(kind(JSON.parse(String(data)))) } catch {}
        if (this.#held) this.#held.push(data)
        else super.send(data)
      }
    }
    navigator.serviceWorker?.addEventListener('message', (e) => {
      if (e.data?.maygh === 'via') seen.via.push(e.data.id)
      if (e.data?.maygh === 'invited') seen.invited.push(e.data)
    })
  }, { farMs, old })
  return {
    /** @param {string} path */
    open: async (path) => {
      await tab.goto(site.url + path)
      await tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    },
    stats: () => tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()),
    /** @returns {Promise<{ sent: string[], via: (string | null)[], toWorker: string[], invited: any[] }>} */
    seen: () => tab.evaluate(() => /** @type {any} */ (globalThis).__seen),
    tab,
    close: () => browser.close()
  }
}

for (const kind of /** @type {const} */ (['chromium', 'firefox'])) {
  test(`${kind}: a page's first lookup goes through its worker's socket, a fetch-only peer, and its images come from the holder`, { timeout: 120000 }, async () => {
    const holder = await visitor('chromium')
    const b = await visitor(kind, { farMs: FAR_MS })
    try {
      await holder.open('/')
      assert.equal((await holder.stats()).held, IMAGES.length)
      // B's first page installs the worker and joins: the worker then opens its own socket.
      await b.open('/about.html')
      const sessions = coordinator.sessions.size
      await b.open('/')
      const seen = await b.seen()
      const id = seen.via.find((v) => typeof v === 'string')
      assert.ok(id, `the worker said its socket is up (${JSON.stringify(seen)})`)
      assert.ok(!seen.sent.includes('lookup'), `no lookup over the page's own socket: ${seen.sent}`)
      // Its worker looked its first requests up before its script ran, and invited the holder to make the offer.
      const holderId = (await holder.stats()).peerId
      assert.deepEqual(seen.invited.map((m) => Object.keys(m.offered)).filter((o) => o.length), [[holderId]], `the worker invited the holder: ${JSON.stringify(seen.invited)}`)
      assert.ok((await holder.seen()).sent.includes('connect+offer'), 'the holder made the offer')
      assert.ok(!seen.toWorker.some((k) => k.endsWith('offer') || k.endsWith('offers')) && !seen.sent.some((k) => k.endsWith('offer') || k.endsWith('offers')), `the page made none: ${seen.toWorker} / ${seen.sent}`)
      const stats = await b.stats()
      assert.equal(stats.peer.count, IMAGES.length, `every image from the holder (${JSON.stringify(stats.errors)})`)
      assert.notEqual(stats.peerId, id, 'the page has a peer id of its own')
      // The worker's peer is an ordinary session that holds nothing.
      const session = [...coordinator.sessions.values()].find((s) => s.peerId === id)
      assert.ok(session, 'the coordinator knows the worker\'s peer')
      assert.equal(session.assets.size, 0, 'it holds nothing')
      assert.ok(coordinator.sessions.size >= sessions, 'the page\'s own socket joined as well')
    } finally {
      await holder.close()
      await b.close()
    }
  })
}

test('chromium: a holder from before invitations ignores one; the page then offers to it itself, through its worker\'s socket, and gets its images from it, with no fault counted', { timeout: 120000 }, async () => {
  const holder = await visitor('chromium', { old: true })
  const b = await visitor('chromium', { farMs: FAR_MS })
  try {
    await holder.open('/')
    await b.open('/about.html')
    await b.open('/')
    const seen = await b.seen()
    const holderId = (await holder.stats()).peerId
    assert.deepEqual(seen.invited.map((m) => Object.keys(m.offered)).filter((o) => o.length), [[holderId]], `the worker invited the holder: ${JSON.stringify(seen.invited)}`)
    assert.ok(!(await holder.seen()).sent.includes('connect+offer'), 'the holder made no offer')
    assert.ok(seen.toWorker.includes('connect+offer'), `the page offered, the worker's way: ${seen.toWorker}`)
    const stats = await b.stats()
    assert.equal(stats.peer.count, IMAGES.length, `every image from the holder (${JSON.stringify(stats)})`)
    assert.deepEqual(stats.errors, {}, 'the holder was not passed over')
  } finally {
    await holder.close()
    await b.close()
  }
})

test('chromium: with the worker\'s socket gone, the next page looks up over its own socket and still gets its images from the holder', { timeout: 120000 }, async () => {
  const holder = await visitor('chromium')
  const b = await visitor('chromium')
  try {
    await holder.open('/')
    await b.open('/about.html')
    // The worker's socket cut: it is opened again at the next navigation, or not soon enough (the page's own then).
    const id = (await b.seen()).via.find((v) => typeof v === 'string')
    const worker = [...coordinator.sessions.values()].find((s) => s.peerId === id)
    assert.ok(worker, 'the worker\'s socket joined')
    worker.ws.terminate()
    await until(async () => ![...coordinator.sessions.values()].some((s) => s.peerId === id))
    await b.open('/')
    const stats = await b.stats()
    assert.equal(stats.peer.count, IMAGES.length, `every image from the holder (${JSON.stringify(stats.errors)})`)
  } finally {
    await holder.close()
    await b.close()
  }
})

test('chromium: a worker the browser stopped (as it stops an idle one) opens its socket again at the next navigation, from what it kept', { timeout: 120000 }, async () => {
  const holder = await visitor('chromium')
  const b = await visitor('chromium', { farMs: FAR_MS })
  try {
    await holder.open('/')
    await b.open('/about.html')
    const before = (await b.seen()).via.find((v) => typeof v === 'string')
    assert.ok(before)
    const cdp = await b.tab.context().newCDPSession(b.tab)
    await cdp.send('ServiceWorker.enable')
    await cdp.send('ServiceWorker.stopAllWorkers')
    await until(async () => ![...coordinator.sessions.values()].some((s) => s.peerId === before))
    await b.open('/')
    const seen = await b.seen()
    const after = seen.via.find((v) => typeof v === 'string')
    assert.ok(after && after !== before, `a new worker's socket is up (${JSON.stringify(seen)})`)
    assert.ok(!seen.sent.includes('lookup'), `the first lookup went through it: ${seen.sent}`)
    assert.equal((await b.stats()).peer.count, IMAGES.length)
  } finally {
    await holder.close()
    await b.close()
  }
})

test('chromium: a visitor who opts out has its worker close its socket, and open none on its next pages', { timeout: 120000 }, async () => {
  const b = await visitor('chromium')
  try {
    await b.open('/about.html')
    const id = (await b.seen()).via.find((v) => typeof v === 'string')
    assert.ok([...coordinator.sessions.values()].some((s) => s.peerId === id), 'its worker\'s socket is up')
    await b.tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.optOut())
    await until(async () => ![...coordinator.sessions.values()].some((s) => s.peerId === id))
    const fetchOnly = () => [...coordinator.sessions.values()].filter((s) => s.fetchOnly).length
    const others = fetchOnly()
    await b.open('/')
    assert.deepEqual((await b.seen()).via.filter((v) => v !== null), [], 'no socket of the worker\'s is up for the next page')
    assert.equal(fetchOnly(), others)
  } finally {
    await b.close()
  }
})
