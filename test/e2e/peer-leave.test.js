/**
 * Scenario 3: a holder that leaves stops being handed out, and a holder that
 * is listed but cannot be reached costs a timeout, never a hang.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, openVisitor, images, probeCoordinator, until } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
before(async () => { stack = await startStack() })
after(async () => { await stack?.close() })

/** @param {import('../support/browsers.js').Visitor} v */
async function assertAllFromOrigin (v) {
  const imgs = await images(v.page)
  for (const img of imgs) assert.ok(img.width > 0, `${img.url} rendered`)
  const s = await v.stats()
  assert.equal(s.peer.count, 0, 'nothing came from peers')
  assert.equal(s.rejected, 0)
  assert.ok(s.origin.count >= imgs.length, 'every image came from the origin')
}

test('A closes: lookups stop returning A and C loads everything from the origin', { timeout: 120000 }, async () => {
  const probe = await probeCoordinator(stack.coordinator.url)
  try {
    const a = await openVisitor('chromium', stack.shop)
    const { peerId } = await a.stats()
    const hash = stack.manifest.assets[(await images(a.page))[0].url].hash
    assert.ok((await probe.holders(hash)).includes(peerId), 'A is listed while open')
    await a.close()
    await until(async () => !(await probe.holders(hash)).includes(peerId))

    const c = await openVisitor('chromium', stack.shop)
    try {
      await assertAllFromOrigin(c)
    } finally {
      await c.close()
    }
  } finally {
    probe.close()
  }
})

test('A is listed but unreachable: C times out on it and loads from the origin', { timeout: 120000 }, async () => {
  const a = await openVisitor('chromium', stack.shop)
  try {
    // A stays joined (so lookups return it) but can no longer answer offers.
    await a.page.evaluate(() => {
      /** @type {any} */ (globalThis).RTCPeerConnection = function () { throw new Error('unreachable for this test') }
    })
    const c = await openVisitor('chromium', stack.shop)
    try {
      await assertAllFromOrigin(c)
      const { errors } = await c.stats()
      assert.ok(errors.MGH_ERR_CONNECT_TIMEOUT >= 1, `C tried A and gave up (${JSON.stringify(errors)})`)
    } finally {
      await c.close()
    }
  } finally {
    await a.close()
  }
})
