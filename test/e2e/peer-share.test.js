/**
 * Scenarios 1 and 2: a second visitor gets the shop's images from the first
 * visitor's browser instead of the origin — Chromium→Chromium, then across
 * engines both ways.
 */
import { test, before, after } from 'node:test'
import { startStack, assertPeerShare } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
before(async () => { stack = await startStack() })
after(async () => { await stack?.close() })

test('Chromium → Chromium: B gets ≥ 90 % of image bytes from A', { timeout: 120000 }, () => assertPeerShare(stack, 'chromium', 'chromium'))
test('Firefox → Chromium', { timeout: 120000 }, () => assertPeerShare(stack, 'firefox', 'chromium'))
test('Chromium → Firefox', { timeout: 120000 }, () => assertPeerShare(stack, 'chromium', 'firefox'))
