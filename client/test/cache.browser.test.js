/**
 * The IndexedDB cache in real Chromium: LRU eviction under the quota, entries
 * surviving a reopen, and corrupted entries detected and deleted on read.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { launchBrowser } from '../../test/support/browsers.js'

/** @type {import('node:http').Server} */
let server
/** @type {import('playwright-core').Browser} */
let browser
/** @type {import('playwright-core').Page} */
let page

before(async () => {
  const harness = await build({
    stdin: {
      contents: "import { Cache } from './cache.js'; import { sriOf } from '../../protocol/index.js'; Object.assign(globalThis, { Cache, sriOf })",
      resolveDir: fileURLToPath(new URL('../src', import.meta.url))
    },
    bundle: true,
    format: 'iife',
    write: false
  })
  const js = harness.outputFiles[0].text
  server = createServer((req, res) => {
    if (req.url === '/harness.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js)
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script src="/harness.js"></script>')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  browser = await launchBrowser('chromium')
  page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${/** @type {any} */ (server.address()).port}/`)
})
after(async () => {
  await browser?.close()
  server?.close()
})

test('evicts least recently used entries to stay under the quota, and reports every change', async () => {
  const r = await page.evaluate(async () => {
    const g = /** @type {any} */ (globalThis)
    const changes = []
    const asset = async (/** @type {number} */ seed) => {
      const bytes = new Uint8Array(100_000).fill(seed)
      return { bytes, hash: await g.sriOf(bytes) }
    }
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(asset))
    // Recency comes from the cache's clock; ours moves a second between steps, so
    // no two steps share a timestamp however fast the machine is.
    let now = 1_700_000_000_000
    const cache = await new g.Cache({ quotaBytes: 250_000, dbName: 'lru', now: () => now, onChange: (/** @type {any} */ ch) => changes.push(ch) }).open()
    await cache.put(a.hash, a.bytes, 'x/a')
    now += 1000
    await cache.put(b.hash, b.bytes, 'x/b')
    now += 1000
    await cache.put(c.hash, c.bytes, 'x/c') // over quota: a (oldest) goes
    const afterC = [cache.has(a.hash), cache.has(b.hash), cache.has(c.hash)]
    now += 1000
    const gotB = await cache.get(b.hash) // b is now more recent than c
    now += 1000
    await cache.put(d.hash, d.bytes, 'x/d') // c goes
    const afterD = [cache.has(b.hash), cache.has(c.hash), cache.has(d.hash)]
    const tooBig = await cache.put('sha256-big', new Uint8Array(300_000), 'x/big')
    const reopened = await new g.Cache({ quotaBytes: 250_000, dbName: 'lru' }).open()
    return {
      afterC,
      afterD,
      gotB: gotB && gotB.type === 'x/b' && gotB.bytes.length === 100_000,
      bytes: cache.bytes,
      tooBig,
      reopened: reopened.hashes(),
      expectReopened: [d.hash, b.hash],
      changes: changes.map((ch) => ch.add ? 'add' : `remove ${ch.remove.length}`)
    }
  })
  assert.deepEqual(r.afterC, [false, true, true])
  assert.equal(r.gotB, true)
  assert.deepEqual(r.afterD, [true, false, true])
  assert.equal(r.bytes, 200_000)
  assert.equal(r.tooBig, false, 'an asset larger than the quota is not stored')
  assert.deepEqual(r.reopened, r.expectReopened, 'survives a reopen, most recent first')
  assert.deepEqual(r.changes, ['add', 'add', 'add', 'remove 1', 'add', 'remove 1'])
})

test('a corrupted entry fails verification on read and is deleted', async () => {
  const r = await page.evaluate(async () => {
    const g = /** @type {any} */ (globalThis)
    const bytes = new Uint8Array(50_000).fill(7)
    const hash = await g.sriOf(bytes)
    const corrupt = []
    const cache = await new g.Cache({ quotaBytes: 1e6, dbName: 'corrupt', onCorrupt: (/** @type {string} */ h) => corrupt.push(h) }).open()
    await cache.put(hash, bytes, 'x/y')
    const before = Boolean(await cache.get(hash))
    const request = (/** @type {IDBRequest} */ r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
    const rec = await request(cache.store('data', 'readonly').get(hash))
    rec.bytes[10] ^= 1
    await request(cache.store('data', 'readwrite').put(rec))
    const after = await cache.get(hash)
    return { before, after, has: cache.has(hash), corrupt: corrupt.length === 1 && corrupt[0] === hash, left: await request(cache.store('data', 'readonly').count()) }
  })
  assert.deepEqual(r, { before: true, after: null, has: false, corrupt: true, left: 0 })
})
