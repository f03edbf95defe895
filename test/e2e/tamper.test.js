/* global indexedDB -- used inside page.evaluate callbacks, which run in the browser */
/**
 * Scenario 4: bytes that fail SHA-256 verification are never shown or kept.
 * A peer that sends corrupted bytes is rejected by the receiver (which shows
 * the right image from the origin, counts one rejection, reports the peer and
 * asks it nothing more); a corrupted
 * IndexedDB entry is caught by the serving peer, which answers `miss`.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, openVisitor, images, originImageBytes, probeCoordinator, until, corruptReplies } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
/** an image whose size no other image has, so A can recognise its reply header on the wire */
let target = ''
before(async () => {
  stack = await startStack()
  const sizes = new Map()
  const imgs = Object.entries(stack.manifest.assets).filter(([path]) => path.startsWith('/img/'))
  for (const [, { size }] of imgs) sizes.set(size, (sizes.get(size) ?? 0) + 1)
  target = /** @type {string} */ (imgs.find(([, { size }]) => sizes.get(size) === 1)?.[0])
  assert.ok(target, 'some image has a unique size')
})
after(async () => { await stack?.close() })

/**
 * SHA-256 (SRI form) of what an `<img>` shows, computed in the page.
 * @param {import('playwright-core').Page} page
 * @param {string} url its data-maygh-src
 */
function shownHash (page, url) {
  return page.evaluate(async (url) => {
    const img = /** @type {HTMLImageElement} */ (document.querySelector(`img[data-maygh-src="${url}"]`))
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await (await fetch(img.src)).arrayBuffer()))
    return 'sha256-' + btoa(String.fromCharCode(...digest))
  }, url)
}

test('a peer that corrupts bytes on the wire is rejected; the receiver shows the origin image', { timeout: 120000 }, async () => {
  const a = await openVisitor('chromium', stack.shop)
  let b
  try {
    // A flips one byte in the first binary frame of its reply for `target`,
    // after its own pre-serve verification.
    await corruptReplies(a.page, stack.manifest.assets[target].size)
    const before = originImageBytes(await stack.originStats(), target)
    b = await openVisitor('chromium', stack.shop)
    for (const img of await images(b.page)) assert.ok(img.width > 0, `${img.url} rendered`)
    const sb = await b.stats()
    assert.equal(sb.rejected, 1, 'exactly one rejection')
    assert.equal(await shownHash(b.page, target), stack.manifest.assets[target].hash, 'B shows the genuine image')
    const after = originImageBytes(await stack.originStats(), target)
    assert.equal(after.requests - before.requests, 1, 'B fetched the rejected image from the origin')
    // B reported A and asked it nothing more: the images not yet in from A by then came from the origin.
    assert.match(await (await fetch(`${stack.coordinator.httpUrl}/metrics`)).text(), /maygh_reports_total\{reason="hash_mismatch"\} 1\n/)
    assert.equal(sb.peer.count + sb.origin.count, (await images(b.page)).length, 'every image from A or the origin')
  } finally {
    await b?.close()
    await a.close()
  }
})

test('a corrupted IndexedDB entry is caught by the serving peer and answered miss', { timeout: 120000 }, async () => {
  const probe = await probeCoordinator(stack.coordinator.url)
  const a = await openVisitor('chromium', stack.shop)
  let b
  try {
    const { hash } = stack.manifest.assets[target]
    await a.page.evaluate((hash) => new Promise((resolve, reject) => {
      const open = indexedDB.open('maygh')
      open.onerror = () => reject(open.error)
      open.onsuccess = () => {
        const tx = open.result.transaction('data', 'readwrite')
        const store = tx.objectStore('data')
        const get = store.get(hash)
        get.onsuccess = () => {
          const rec = get.result
          rec.bytes[rec.bytes.length >> 1] ^= 0x5a
          store.put(rec)
        }
        tx.oncomplete = () => { open.result.close(); resolve(undefined) }
        tx.onerror = () => reject(tx.error)
      }
    }), hash)
    const { peerId } = await a.stats()
    assert.ok((await probe.holders(hash)).includes(peerId), 'A still claims the asset')

    b = await openVisitor('chromium', stack.shop)
    for (const img of await images(b.page)) assert.ok(img.width > 0, `${img.url} rendered`)
    const sb = await b.stats()
    assert.equal(sb.rejected, 0, 'A sent no bad bytes')
    assert.equal(await shownHash(b.page, target), hash, 'B shows the genuine image')
    assert.ok(sb.peer.count > 0, 'the other images came from A')
    assert.ok(sb.errors.MGH_ERR_MISS >= 1, 'A answered miss')

    await a.idle()
    const sa = await a.stats()
    assert.equal(sa.corrupt, 1, 'A found and deleted its corrupted entry')
    await until(async () => !(await probe.holders(hash)).includes(peerId))
    const holders = await probe.holders(hash)
    assert.ok(holders.includes(sb.peerId), 'B, which has a verified copy, is listed')
  } finally {
    await b?.close()
    await a.close()
    probe.close()
  }
})
