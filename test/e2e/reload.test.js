/**
 * Scenario 5: the cache survives a reload. B reloads and every image comes
 * from IndexedDB with no network fetch, and the coordinator lists B again.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, openVisitor, images, originImageBytes, probeCoordinator } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
before(async () => { stack = await startStack() })
after(async () => { await stack?.close() })

test('after a reload every image comes from IndexedDB, with zero fetches', { timeout: 120000 }, async () => {
  const a = await openVisitor('chromium', stack.shop)
  const b = await openVisitor('chromium', stack.shop)
  const probe = await probeCoordinator(stack.coordinator.url)
  try {
    const count = (await images(b.page)).length
    assert.ok((await b.stats()).peer.count > 0, 'B first got images from A')
    const before = originImageBytes(await stack.originStats())

    b.requests.length = 0
    await b.page.reload()
    await b.idle()
    const imgs = await images(b.page)
    for (const img of imgs) assert.ok(img.width > 0, `${img.url} rendered`)
    const s = await b.stats()
    assert.equal(s.cache.count, count, 'every image from IndexedDB')
    assert.equal(s.origin.count, 0)
    assert.equal(s.peer.count, 0)
    assert.deepEqual(b.requests.filter((u) => new URL(u).pathname.startsWith('/img/')), [], 'no image requests on the network')
    const after = originImageBytes(await stack.originStats())
    assert.equal(after.requests, before.requests, 'origin saw no image requests')

    // The holdings come back with the join after the reload.
    assert.equal(s.held, count, 'the coordinator acknowledged the cached images')
    const hash = stack.manifest.assets[imgs[0].url].hash
    assert.ok((await probe.holders(hash)).includes(s.peerId), 'B is listed under its new id')

    // The page API and late elements: Maygh.load(), `load` events, an <img> added after start-up.
    const url = imgs[0].url
    const late = await b.page.evaluate(async (url) => {
      const M = /** @type {any} */ (globalThis).Maygh
      const events = []
      M.on('load', (/** @type {any} */ e) => events.push({ url: e.url, hash: e.hash, source: e.source, bytes: e.bytes, timed: e.ms >= 0 }))
      const blob = await M.load(url)
      const img = document.createElement('img')
      img.dataset.mayghSrc = url
      // The client sets src once (blob URL, or the plain URL if every source failed): wait for that load.
      const rendered = new Promise((resolve, reject) => {
        img.addEventListener('load', resolve, { once: true })
        img.addEventListener('error', () => reject(new Error(`the late <img> failed to load (${img.src})`)), { once: true })
      })
      document.body.append(img)
      await rendered
      return { size: blob.size, type: blob.type, events, width: img.naturalWidth }
    }, url)
    const { hash: h, size, type } = stack.manifest.assets[url]
    assert.equal(late.size, size)
    assert.equal(late.type, type)
    assert.ok(late.width > 0, 'the late <img> rendered')
    assert.deepEqual(late.events, [1, 2].map(() => ({ url, hash: h, source: 'cache', bytes: size, timed: true })))
  } finally {
    probe.close()
    await b.close()
    await a.close()
  }
})
