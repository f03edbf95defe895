/* global WebSocket -- used inside page.evaluate callbacks, which run in the browser */
/**
 * Only the site's own pages use its coordinator, in real browsers: the
 * coordinator allows the shop's origin and wants join tokens. A visitor whose
 * page carries a token its backend signed shares images with the next one; a
 * page with no token, an expired or forged one, or served from another origin
 * is refused with the code, says why in its console once, stops trying and
 * shows every image from the origin. A page that tries to signal a peer no lookup introduced it to is refused.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, launchBrowser, images, until, openWithToken } from '../support/browsers.js'
import { signJoinToken } from '../../coordinator/src/join-token.js'

const SECRET = 'e2e-secret-of-at-least-32-characters'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
/** @type {import('playwright-core').Browser} */
let browser
/** the shop's origin, the only one the coordinator allows */
let shop = ''
before(async () => {
  stack = await startStack({ coordinator: (siteOrigin) => ({ allowedOrigins: [siteOrigin], tokenSecrets: [SECRET] }) })
  shop = new URL(stack.site.url).origin
  browser = await launchBrowser('chromium')
})
after(async () => {
  await browser?.close()
  await stack?.close()
})

/**
 * @param {string} url
 * @param {string | undefined} token
 */
const visit = (url, token) => openWithToken(browser, url, token)

/** @param {import('playwright-core').Page} page */
async function assertEveryImageShown (page) {
  for (const img of await images(page)) assert.ok(img.width > 0, `${img.url} shows`)
}

test('a visitor with a token its site signed joins, and the next one gets its images from it', { timeout: 120000 }, async () => {
  const a = await visit(stack.shop, signJoinToken({ origin: shop, visitor: 'a' }, SECRET))
  const b = await visit(stack.shop, signJoinToken({ origin: shop, visitor: 'b' }, SECRET))
  try {
    assert.equal((await a.stats()).joined, true)
    await assertEveryImageShown(b.page)
    const sb = await b.stats()
    assert.equal(sb.joined, true)
    assert.ok(sb.peer.count > 0, `B got images from A: ${JSON.stringify(sb)}`)
  } finally {
    await Promise.all([a.close(), b.close()])
  }
})

test('no token, an expired or a forged one, or a page of another origin: refused with the code, said once in the console, no retrying, every image from the origin', { timeout: 120000 }, async () => {
  const port = new URL(stack.site.url).port
  const cases = /** @type {[string, string, string | undefined, string][]} */ ([
    ['no token', stack.shop, undefined, 'MGH_ERR_TOKEN_MISSING'],
    ['expired', stack.shop, signJoinToken({ origin: shop, ttlSeconds: 60, now: Date.now() - 3_600_000 }, SECRET), 'MGH_ERR_TOKEN_EXPIRED'],
    ['forged', stack.shop, signJoinToken({ origin: shop }, 'not-the-site-secret-but-32-chars-long'), 'MGH_ERR_TOKEN_INVALID'],
    // The same shop served as another origin (another host name), with a token good for the real one.
    ['foreign origin', `http://localhost:${port}/`, signJoinToken({ origin: shop }, SECRET), 'MGH_ERR_ORIGIN_NOT_ALLOWED']
  ])
  for (const [what, url, token, code] of cases) {
    const connectionsBefore = stack.coordinator.counters.connections
    const v = await visit(url, token)
    try {
      await assertEveryImageShown(v.page)
      const stats = await v.stats()
      assert.equal(stats.joined, false, what)
      assert.equal(stats.errors[code], 1, `${what}: ${JSON.stringify(stats.errors)}`)
      assert.equal(stats.peer.count, 0, what)
      assert.ok(stats.origin.count > 0, `${what}: images came from the origin`)
      // Refused once, and never tried again.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      assert.equal(stack.coordinator.counters.connections - connectionsBefore, 1, `${what}: one connection`)
      // The site's owner reads why in the page's console, once.
      const said = v.logs.filter((line) => line.includes('maygh: peers are off:'))
      assert.equal(said.length, 1, `${what}: ${JSON.stringify(v.logs)}`)
      assert.match(said[0], new RegExp(`^warning: maygh: peers are off: .*\\(${code}, page origin ${new URL(url).origin}\\)$`), what)
    } finally {
      await v.close()
    }
  }
})

test('a page that signals a peer no lookup introduced it to is refused, and nothing reaches that peer', { timeout: 120000 }, async () => {
  const a = await visit(stack.shop, signJoinToken({ origin: shop, visitor: 'victim' }, SECRET))
  const m = await visit(stack.shop, signJoinToken({ origin: shop, visitor: 'mallory' }, SECRET))
  try {
    // (M's own page may have loaded images from A: what counts is what changes from here.)
    const { peerId: victim, served, connected } = await a.stats()
    const relayed = stack.coordinator.counters.relayed
    // Mallory's page opens a socket of its own to the coordinator and aims an offer at A.
    const codes = await m.page.evaluate(async ({ url, token, victim }) => {
      const ws = new WebSocket(url)
      /** @type {any[]} */
      const replies = []
      ws.onmessage = (e) => replies.push(JSON.parse(e.data))
      await new Promise((resolve) => { ws.onopen = resolve })
      ws.send(JSON.stringify({ type: 'join', token, ref: 1 }))
      const offer = { cid: 'mallory', sdp: { type: 'offer', sdp: 'v=0' } }
      await new Promise((resolve) => setTimeout(resolve, 300))
      ws.send(JSON.stringify({ type: 'connect', to: victim, signal: offer, ref: 2 }))
      ws.send(JSON.stringify({ type: 'connect', to: victim, signal: { cid: 'mallory', candidate: { candidate: 'x' } } }))
      await new Promise((resolve) => setTimeout(resolve, 500))
      ws.close()
      return replies.map((r) => r.code ?? r.type)
    }, { url: stack.coordinator.url, token: signJoinToken({ origin: shop }, SECRET), victim })
    assert.deepEqual(codes, ['welcome', 'MGH_ERR_NOT_INTRODUCED', 'MGH_ERR_NOT_INTRODUCED'])
    await until(async () => (await a.stats()).joined)
    assert.equal(stack.coordinator.counters.relayed, relayed, 'the coordinator relayed nothing')
    const after = await a.stats()
    assert.deepEqual(after.served, served, 'A served nobody new')
    assert.equal(after.connected, connected, 'A set up no connection')
  } finally {
    await Promise.all([a.close(), m.close()])
  }
})
