/**
 * Privacy mode with real browsers and a real TURN server (coturn, from
 * Debian's package): the coordinator hands out TURN credentials minted per
 * peer and `iceTransportPolicy: 'relay'`, and the second visitor still gets
 * the shop's images from the first, every byte through the relay: each page
 * made its connections relay-only, gathered relay candidates only, and was
 * handed none but relay ones, their base addresses blanked.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startStack, assertPeerShare } from '../support/browsers.js'
import { startTurnServer } from '../support/turn-server.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
/** @type {Awaited<ReturnType<typeof startTurnServer>>} */
let turn
before(async () => {
  turn = await startTurnServer()
  stack = await startStack({ coordinator: () => ({ iceTransportPolicy: 'relay', turnUrls: [turn.url], turnSecret: turn.secret }) })
})
after(async () => {
  await stack?.close()
  await turn?.close()
})

/**
 * Records, in the page, the policy each RTCPeerConnection was made with and
 * every candidate it gathered and was handed.
 * @param {import('playwright-core').Page} page
 */
const recordIce = async (page) => {
  await page.addInitScript(() => {
    const Real = globalThis.RTCPeerConnection
    const seen = /** @type {any} */ (globalThis).__ice = { policies: /** @type {string[]} */ ([]), local: /** @type {string[]} */ ([]), remote: /** @type {string[]} */ ([]) }
    globalThis.RTCPeerConnection = /** @type {any} */ (class extends Real {
      /** @param {RTCConfiguration} [config] */
      constructor (config) {
        super(config)
        seen.policies.push(config?.iceTransportPolicy ?? 'all')
        this.addEventListener('icecandidate', (e) => { if (e.candidate?.candidate) seen.local.push(e.candidate.candidate) })
      }

      /** @param {any} c */
      addIceCandidate (c) {
        if (c?.candidate) seen.remote.push(c.candidate)
        return super.addIceCandidate(c)
      }
    })
  })
}

/**
 * @param {import('../support/browsers.js').Visitor} v
 * @param {string} who
 */
async function assertRelayed (v, who) {
  const seen = await v.page.evaluate(() => /** @type {any} */ (globalThis).__ice)
  assert.ok(seen.policies.length > 0, `${who} made connections`)
  assert.deepEqual([...new Set(seen.policies)], ['relay'], `${who}'s connections were relay-only`)
  assert.ok(seen.local.length > 0 && seen.remote.length > 0, `${who} gathered and was handed candidates`)
  for (const c of seen.local) assert.match(c, /typ relay/, `${who} gathered ${c}`)
  for (const c of seen.remote) assert.match(c, /typ relay raddr 0\.0\.0\.0 rport 0/, `${who} was handed ${c}`)
}

const check = async (/** @type {any} */ a, /** @type {any} */ b) => {
  await assertRelayed(a, 'A')
  await assertRelayed(b, 'B')
}

test('Chromium → Chromium through the TURN relay only: B gets ≥ 90 % of image bytes from A', { timeout: 120000 }, () =>
  assertPeerShare(stack, 'chromium', 'chromium', { init: recordIce, check }))
test('Firefox → Chromium through the TURN relay only', { timeout: 120000 }, () =>
  assertPeerShare(stack, 'firefox', 'chromium', { init: recordIce, check }))
