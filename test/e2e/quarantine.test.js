/**
 * A poisoning peer in real browsers: A corrupts every image it serves. Each
 * visitor it serves rejects the bytes (showing the origin's), reports A and
 * asks it nothing more; once `reportThreshold` visitors (each named by its
 * site's token) have reported A, the coordinator quarantines it, and a later
 * visitor is never handed A: it gets its images from the honest visitors.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, launchBrowser, images, openWithToken, until, corruptReplies } from '../support/browsers.js'
import { signJoinToken } from '../../coordinator/src/join-token.js'

const SECRET = 'e2e-secret-of-at-least-32-characters'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
/** @type {import('playwright-core').Browser} */
let browser
before(async () => {
  stack = await startStack({ coordinator: (siteOrigin) => ({ allowedOrigins: [siteOrigin], tokenSecrets: [SECRET], reportThreshold: 2 }) })
  browser = await launchBrowser('chromium')
})
after(async () => {
  await browser?.close()
  await stack?.close()
})

/** @param {string} visitor the site's name for the visitor */
const visit = (visitor) => openWithToken(browser, stack.shop, signJoinToken({ origin: new URL(stack.site.url).origin, visitor }, SECRET))

test('a poisoning peer is rejected and reported by the visitors it serves, quarantined, and never handed to a later one', { timeout: 180000 }, async () => {
  const opened = []
  try {
    const liar = await visit('liar')
    opened.push(liar)
    // From now on A flips a byte in the first binary frame of every reply it sends.
    await corruptReplies(liar.page)
    const { peerId: liarId } = await liar.stats()
    // Each meets A as the only holder (the first leaves before the second comes).
    for (const name of ['first', 'second']) {
      const v = await visit(name)
      opened.push(v)
      for (const img of await images(v.page)) assert.ok(img.width > 0, `${name}: ${img.url} shows`)
      const stats = await v.stats()
      assert.ok(stats.rejected >= 1, `${name} rejected A's bytes: ${JSON.stringify(stats)}`)
      assert.equal(stats.peer.count, 0, `${name}: no image from a peer (A was the only holder)`)
      if (name === 'first') await v.close()
    }
    const session = /** @type {import('../../coordinator/src/session.js').Session} */ (await until(async () => {
      const s = stack.coordinator.sessions.get(liarId)
      return s?.quarantined ? s : null
    }))
    assert.equal(session.assets.size, 0, 'A\'s holdings left the store')
    assert.match(await (await fetch(`${stack.coordinator.httpUrl}/metrics`)).text(), /maygh_quarantines_total 1\n/)

    const later = await visit('later')
    opened.push(later)
    for (const img of await images(later.page)) assert.ok(img.width > 0, `later: ${img.url} shows`)
    const stats = await later.stats()
    assert.equal(stats.rejected, 0, 'the later visitor was never handed A')
    assert.ok(stats.peer.count > 0, `it got images from the honest visitors: ${JSON.stringify(stats)}`)
  } finally {
    await Promise.all(opened.map((v) => v.close()))
  }
})
