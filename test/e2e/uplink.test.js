/**
 * Visitors keep their uplink, in real Chromium: a visitor whose browser asks
 * to save data (Save-Data, set through the DevTools protocol as the browser's
 * own setting would) fetches from peers but never uploads and is never handed
 * out; an opted-out visitor leaves at once, stays out on its later visits and
 * shares again when it opts in; a visitor over its upload budget (per session,
 * per day) is no longer handed out.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, launchBrowser, images, until, openShop, probeCoordinator } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
/** @type {import('playwright-core').Browser} */
let browser
/** @type {Awaited<ReturnType<typeof probeCoordinator>>} */
let probe
before(async () => {
  stack = await startStack()
  browser = await launchBrowser('chromium')
  probe = await probeCoordinator(stack.coordinator.url)
})
after(async () => {
  probe?.close()
  await browser?.close()
  await stack?.close()
})

const MB = 1048576

/** @param {Parameters<typeof openShop>[2]} [options] */
const visit = (options) => openShop(browser, stack.shop, options)

/** @param {import('playwright-core').Page} page */
async function assertEveryImageShown (page) {
  for (const img of await images(page)) assert.ok(img.width > 0, `${img.url} shows`)
}

/** Every peer the coordinator hands out for any of the shop's assets. */
async function everyHolder () {
  const hashes = Object.values(stack.manifest.assets).map((a) => a.hash)
  return new Set((await Promise.all(hashes.map((h) => probe.holders(h)))).flat())
}

/** @param {import('playwright-core').Page} page */
const saveData = async (page) => {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Emulation.setDataSaverOverride', { dataSaverEnabled: true })
}

test('a Save-Data visitor fetches from peers but never uploads, and is never handed out', { timeout: 180000 }, async () => {
  const opened = []
  try {
    const c = await visit()
    opened.push(c)
    const a = await visit({ init: saveData })
    opened.push(a)
    assert.equal(await a.page.evaluate(() => /** @type {any} */ (navigator).connection.saveData), true)
    await assertEveryImageShown(a.page)
    const sa = await a.stats()
    assert.deepEqual({ mode: sa.uplink.mode, why: sa.uplink.why, held: sa.held }, { mode: 'receive-only', why: 'save-data', held: 0 })
    assert.ok(sa.peer.count > 0, `A still gets images from C: ${JSON.stringify(sa)}`)
    assert.ok(!(await everyHolder()).has(sa.peerId), 'A is handed out for nothing')

    const b = await visit()
    opened.push(b)
    await assertEveryImageShown(b.page)
    assert.ok((await b.stats()).peer.count > 0, 'B got images from C')
    assert.equal((await a.stats()).served.bytes, 0, 'A uploaded nothing')
  } finally {
    await Promise.all(opened.map((v) => v.close()))
  }
})

test('an opted-out visitor leaves at once, stays out on its next visit, and shares again when it opts in', { timeout: 180000 }, async () => {
  const opened = []
  try {
    const a = await visit()
    opened.push(a)
    const { peerId, held } = await a.stats()
    assert.ok(held >= 30, `A holds the shop's images (${held})`)
    // The shop's own control calls Maygh.optOut().
    await a.page.uncheck('.share-toggle')
    assert.equal(await a.page.textContent('.share-mode'), 'off: opted-out')
    const out = await a.stats()
    assert.deepEqual({ mode: out.uplink.mode, why: out.uplink.why, joined: out.joined, connected: out.connected }, { mode: 'off', why: 'opted-out', joined: false, connected: 0 })
    await until(async () => !(await everyHolder()).has(peerId))

    const b = await visit()
    await assertEveryImageShown(b.page)
    assert.equal((await b.stats()).peer.count, 0, 'B got nothing from A: every image from the origin')
    await b.close()
    assert.equal((await a.stats()).served.bytes, 0)

    // The next visit (another tab, same browser profile) remembers: no coordinator at all.
    const again = await a.context.newPage()
    /** @type {string[]} */
    const sockets = []
    again.on('websocket', (ws) => sockets.push(ws.url()))
    await again.goto(stack.shop)
    await again.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    await assertEveryImageShown(again)
    const stats = () => again.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
    assert.deepEqual((await stats()).uplink.mode, 'off')
    assert.equal(await again.isChecked('.share-toggle'), false)
    assert.deepEqual(sockets, [], 'an opted-out page opens no coordinator connection')

    // Opting in: it joins, announces what it holds, and the next visitor gets images from it.
    await again.evaluate(() => /** @type {any} */ (globalThis).Maygh.optIn())
    await until(async () => {
      const s = await stats()
      return s.joined && s.held >= 30
    })
    const c = await visit()
    opened.push(c)
    await assertEveryImageShown(c.page)
    assert.ok((await c.stats()).peer.count > 0, 'C got images from the opted-in visitor')
    // Both of its tabs share again (the first hears of the choice through storage), and C may have
    // asked either: what they served together is what C got.
    const served = [(await stats()).served.bytes, (await a.stats()).served.bytes]
    assert.ok(served[0] + served[1] > 0, `the visitor's tabs served ${served.join(' and ')} bytes`)
  } finally {
    await Promise.all(opened.map((v) => v.close()))
  }
})

test('a visitor over its upload budget is no longer handed out, this session and, over the day\'s, in its other tabs', { timeout: 180000 }, async () => {
  const budget = { 'upload-session-mb': '0.5', 'upload-day-mb': '0.5' }
  const opened = []
  try {
    const a = await visit({ data: budget })
    opened.push(a)
    const { peerId } = await a.stats()
    assert.ok((await everyHolder()).has(peerId))

    // B fetches the shop from A (the only holder) until A has sent half a megabyte, then from the origin.
    const b = await visit()
    await assertEveryImageShown(b.page)
    const sb = await b.stats()
    await b.close()
    const sa = await a.stats()
    const largest = Math.max(...Object.values(stack.manifest.assets).map((x) => x.size))
    assert.ok(sb.peer.count > 0, 'B got images from A until its budget was spent')
    assert.ok(sa.served.bytes >= 0.5 * MB && sa.served.bytes <= 0.5 * MB + largest, `A sent ${sa.served.bytes} bytes: its budget and at most the asset that crossed it`)
    assert.deepEqual({ mode: sa.uplink.mode, why: sa.uplink.why, held: sa.held }, { mode: 'receive-only', why: 'budget', held: 0 })
    assert.equal(sb.rejected, 0)
    assert.ok(!(await everyHolder()).has(peerId), 'the coordinator no longer hands A out')

    const c = await visit()
    opened.push(c)
    await assertEveryImageShown(c.page)
    assert.equal((await c.stats()).peer.count, 0, 'C was handed nobody: every image from the origin')
    assert.equal((await a.stats()).served.bytes, sa.served.bytes, 'A sent nothing more')

    // Another tab of A's starts a session of its own, but today's budget is spent: it lists nothing.
    const tab = await a.context.newPage()
    await tab.goto(stack.shop)
    await tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    const st = await tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
    assert.deepEqual({ mode: st.uplink.mode, why: st.uplink.why, session: st.uplink.sent.session, joined: st.joined, held: st.held }, { mode: 'receive-only', why: 'budget', session: 0, joined: true, held: 0 })
    assert.equal(st.uplink.sent.day, sa.served.bytes)
  } finally {
    await Promise.all(opened.map((v) => v.close()))
  }
})
