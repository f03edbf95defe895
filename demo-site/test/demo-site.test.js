import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { buildCatalog } from '../src/catalog.js'
import { ERRORS } from '../../protocol/index.js'
import { sriHash as sha } from '../../client/manifest.js'
import { DEFAULT_PUBLIC_DIR, generateAssets } from '../src/images.js'
import { startDemoSite } from '../src/server.js'
import { checkPng } from '../../test/support/image-checks.js'
import { rawRequest } from '../../test/support/raw-http.js'

/** @type {Awaited<ReturnType<typeof startDemoSite>>} */
let site
let tmp = ''
const BUNDLE = '/* fake maygh client for tests */\nconsole.log("maygh")\n'

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'maygh-demo-'))
  await writeFile(join(tmp, 'maygh.js'), BUNDLE)
  site = await startDemoSite({ port: 0, coordinatorUrl: 'ws://127.0.0.1:7070/ws', clientDir: tmp })
})
after(async () => {
  await site?.close()
  await rm(tmp, { recursive: true, force: true })
})

/**
 * A raw HTTP request (fetch would normalize "..", which is what we want to send).
 * @param {string} method
 * @param {string} path
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }>}
 */
function raw (method, path, headers = {}) {
  return rawRequest(/** @type {number} */ (site.port), method, path, headers)
}

test('images are reproducible: a fresh generation equals the served files byte for byte', async () => {
  const fresh = await generateAssets()
  const manifest = await (await fetch(`${site.url}/maygh-manifest.json`)).json()
  for (const { path, bytes } of fresh) {
    assert.deepEqual(await readFile(join(DEFAULT_PUBLIC_DIR, path)), bytes, path)
    assert.equal(manifest.assets[path].hash, sha(bytes), path)
  }
  assert.equal(fresh.length, Object.keys(manifest.assets).length)
})

test('at least 30 valid PNG product images of 10–300 KB, about 3–4 MB in all', async () => {
  const files = (await readdir(join(DEFAULT_PUBLIC_DIR, 'img'))).filter((f) => f.endsWith('.png'))
  const catalog = buildCatalog()
  assert.ok(files.length >= 30, `${files.length} images`)
  assert.equal(files.length, catalog.length)
  let total = 0
  for (const product of catalog) {
    const png = await readFile(join(DEFAULT_PUBLIC_DIR, product.path))
    assert.ok(png.length >= 10 * 1024 && png.length <= 300 * 1024, `${product.path}: ${png.length} bytes`)
    assert.deepEqual(checkPng(png), { width: product.width, height: product.height, colorType: 2 }, product.path)
    total += png.length
  }
  assert.ok(total >= 3e6 && total <= 4.2e6, `${total} bytes in all`)
})

test('the manifest lists exactly the generated files with their hash, size and type', async () => {
  const res = await fetch(`${site.url}/maygh-manifest.json`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  const manifest = await res.json()
  assert.equal(manifest.version, 1)
  const files = (await readdir(DEFAULT_PUBLIC_DIR, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile() && !d.name.startsWith('.'))
    .map((d) => '/' + relative(DEFAULT_PUBLIC_DIR, join(d.parentPath ?? d.path, d.name)).split(sep).join('/'))
  assert.deepEqual(Object.keys(manifest.assets).sort(), files.sort())
  const types = { png: 'image/png', css: 'text/css', js: 'text/javascript' }
  for (const [path, entry] of Object.entries(manifest.assets)) {
    const served = await fetch(site.url + path)
    const body = Buffer.from(await served.arrayBuffer())
    assert.equal(entry.hash, sha(body), path)
    assert.equal(entry.size, body.length, path)
    assert.equal(entry.type, types[/** @type {keyof types} */ (path.split('.').pop())], path)
    assert.equal(served.headers.get('content-type'), entry.type)
    assert.equal(served.headers.get('etag'), `"${entry.hash}"`)
    assert.equal(served.headers.get('cache-control'), 'no-cache')
  }
})

test('/origin-stats counts every body byte sent, per path, and resets', async () => {
  assert.equal((await fetch(`${site.url}/origin-stats/reset`, { method: 'POST' })).status, 204)
  let bytes = 0
  let requests = 0
  for (const path of ['/', '/img/p01.png', '/img/p02.png', '/img/p01.png', '/static/shop.css', '/maygh.js', '/maygh-manifest.json', '/missing.png']) {
    const res = await fetch(site.url + path)
    const body = Buffer.from(await res.arrayBuffer())
    assert.equal(Number(res.headers.get('content-length')), body.length, path)
    bytes += body.length
    requests++
  }
  const etag = (await raw('HEAD', '/img/p03.png')).headers.etag ?? ''
  const revalidated = await raw('GET', '/img/p03.png', { 'If-None-Match': etag })
  assert.equal(revalidated.status, 304)
  assert.equal(revalidated.body.length, 0)
  requests += 2
  await fetch(`${site.url}/dashboard`).then((r) => r.arrayBuffer()) // the instrument is not counted
  const res = await fetch(`${site.url}/origin-stats`)
  assert.equal(res.headers.get('access-control-allow-origin'), '*')
  const stats = await res.json()
  assert.deepEqual(stats, site.stats())
  assert.equal(stats.requests, requests)
  assert.equal(stats.bytes, bytes)
  const p01 = (await readFile(join(DEFAULT_PUBLIC_DIR, 'img/p01.png'))).length
  assert.deepEqual(stats.byPath['/img/p01.png'], { requests: 2, bytes: 2 * p01 })
  assert.deepEqual(stats.byPath['/img/p03.png'], { requests: 2, bytes: 0 })
  assert.equal(stats.byPath['/maygh.js'].bytes, Buffer.byteLength(BUNDLE))
  assert.equal(stats.byPath['(unknown)'].requests, 1)
  assert.equal(stats.byPath['/origin-stats'], undefined)
  assert.equal(stats.byPath['/dashboard'], undefined)
  assert.equal((await raw('POST', '/origin-stats/reset')).status, 204)
  assert.deepEqual(site.stats(), { requests: 0, bytes: 0, byPath: {} })
  site.resetStats()
})

test('errors: 404, 400 for traversal and bad escapes, 405 with Allow', async () => {
  /** @param {{ status: number, body: Buffer }} r @param {import('../../protocol/errors.js').ErrorCode} code */
  const expectError = (r, code) => {
    assert.equal(r.status, ERRORS[code].status, code)
    const body = JSON.parse(r.body.toString())
    assert.equal(body.error.code, code)
    assert.equal(typeof body.error.message, 'string')
  }
  expectError(await raw('GET', '/img/p99.png'), 'MGH_DEMO_NOT_FOUND')
  expectError(await raw('GET', '/.generator-stamp'), 'MGH_DEMO_NOT_FOUND')
  for (const path of ['/img/../../package.json', '/static/%2e%2e/%2e%2e/package.json', '/img/%2E%2E%2Fx', '/%E0%A4%A', '/img\\..\\x', '/./img/p01.png']) {
    expectError(await raw('GET', path), 'MGH_DEMO_BAD_PATH')
  }
  const post = await raw('POST', '/img/p01.png')
  expectError(post, 'MGH_DEMO_METHOD_NOT_ALLOWED')
  assert.equal(post.headers.allow, 'GET, HEAD')
  expectError(await raw('DELETE', '/'), 'MGH_DEMO_METHOD_NOT_ALLOWED')
  expectError(await raw('GET', '/origin-stats/reset'), 'MGH_DEMO_METHOD_NOT_ALLOWED')
  const head = await raw('HEAD', '/img/p01.png')
  assert.equal(head.status, 200)
  assert.equal(head.body.length, 0)
  assert.equal(Number(head.headers['content-length']), (await readFile(join(DEFAULT_PUBLIC_DIR, 'img/p01.png'))).length)
})

test('the shop page embeds the client once, in either mode, and every product image is a manifest asset', async () => {
  const manifest = await (await fetch(`${site.url}/maygh-manifest.json`)).json()
  for (const [path, script, attr] of [
    ['/', '<script src="/maygh.js" data-coordinator="ws://127.0.0.1:7070/ws" async>', 'src'],
    ['/elements', '<script src="/maygh-elements.js" data-coordinator="ws://127.0.0.1:7070/ws" defer>', 'data-maygh-src']
  ]) {
    const html = await (await fetch(site.url + path)).text()
    const scripts = html.match(/<script\b[^>]*\bsrc="\/maygh[^"]*"[^>]*>/g) ?? []
    assert.deepEqual(scripts, [script], path)
    assert.match(html, /<link rel="stylesheet" href="\/static\/shop\.css">/)
    assert.match(html, /<script src="\/static\/shop\.js" defer><\/script>/)
    const images = (html.match(/<img\b[^>]*>/g) ?? /** @type {string[]} */ ([])).filter((tag) => tag.includes(` ${attr}=`))
    assert.ok(images.length >= 30, `${path}: ${images.length} images with ${attr}`)
    for (const tag of images) {
      // Marked elements carry no src: the browser must not fetch them itself.
      if (attr !== 'src') assert.doesNotMatch(tag, /\ssrc=/)
      assert.match(tag, /\salt="[^"]+" width="\d+" height="\d+"/)
      const url = new RegExp(` ${attr}="([^"]+)"`).exec(tag)?.[1] ?? ''
      assert.ok(manifest.assets[url], `${url} in the manifest`)
    }
  }
  const about = await (await fetch(`${site.url}/about`)).text()
  assert.match(about, /<script src="\/maygh\.js"/, 'the worker can start from any page')
})

test('/maygh.js serves the bundle, or 503 with a clear code when it is not built', async (t) => {
  const ok = await fetch(`${site.url}/maygh.js`)
  assert.equal(ok.status, 200)
  assert.match(ok.headers.get('content-type') ?? '', /^text\/javascript/)
  assert.equal(await ok.text(), BUNDLE)
  const missing = await fetch(`${site.url}/maygh-sw.js`)
  assert.equal(missing.status, 503)
  assert.equal((await missing.json()).error.code, 'MGH_DEMO_CLIENT_NOT_BUILT')
  const other = await startDemoSite({ port: 0, clientDir: join(tmp, 'absent') })
  t.after(() => other.close())
  assert.equal((await fetch(`${other.url}/maygh.js`)).status, 503)
})

test('the dashboard polls the origin, its history and the coordinator stats URL derived from ws://, with Chart.js beside it', async () => {
  site.resetStats()
  const res = await fetch(`${site.url}/dashboard`)
  assert.equal(res.status, 200)
  const html = await res.text()
  assert.match(html, /"coordinatorHttpUrl":"http:\/\/127\.0\.0\.1:7070"/)
  assert.match(html, /getJson\('\/origin-stats'\), getJson\('\/origin-stats\/history'\)/)
  assert.match(html, /coordinator unreachable/)
  assert.match(html, /<script src="\/dashboard\/chart\.js"><\/script>/)
  assert.match(html, /<option value="600">10 min<\/option><option value="120">2 min<\/option>/)
  assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'no external resources')
  const chart = await fetch(`${site.url}/dashboard/chart.js`)
  assert.equal(chart.status, 200)
  assert.match(chart.headers.get('content-type') ?? '', /^text\/javascript/)
  assert.match(await chart.text(), /Chart/)
  assert.deepEqual(site.stats(), { requests: 0, bytes: 0, byPath: {} }, 'the instrument is not counted')
})

test('/origin-stats/history: the last historySeconds second by second, summing to the counters, the same length whatever the traffic', async (t) => {
  site.resetStats()
  const res = await fetch(`${site.url}/origin-stats/history`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('access-control-allow-origin'), '*')
  assert.equal(res.headers.get('cache-control'), 'no-store')
  const quiet = await res.json()
  assert.deepEqual(Object.keys(quiet).sort(), ['assetBytes', 'bytes', 'end', 'intervalMs', 'requests'])
  assert.equal(quiet.intervalMs, 1000)
  assert.equal(quiet.end % 1000, 0)
  for (const key of ['requests', 'bytes', 'assetBytes']) assert.deepEqual(quiet[key], new Array(600).fill(0), key)

  let assetBytes = 0
  for (const path of ['/', '/img/p01.png', '/img/p02.png', '/static/shop.css', '/maygh-manifest.json', '/missing.png', '/img/p01.png']) {
    const body = await (await fetch(site.url + path)).arrayBuffer()
    if (path.startsWith('/img/') || path.startsWith('/static/')) assetBytes += body.byteLength
  }
  const before = await (await fetch(`${site.url}/origin-stats/history`)).json()
  const after = await (await fetch(`${site.url}/origin-stats/history`)).json()
  const sum = (/** @type {number[]} */ v) => v.reduce((a, b) => a + b, 0)
  const stats = site.stats()
  for (const h of [before, after, site.history()]) {
    assert.equal(h.bytes.length, 600, 'bounded: one sample a second')
    assert.equal(sum(h.bytes), stats.bytes, 'every byte the counter has')
    assert.equal(sum(h.requests), stats.requests, 'the history itself is not counted')
    assert.equal(sum(h.assetBytes), assetBytes, 'manifest assets apart')
    assert.ok(h.bytes.every((b, i) => b >= h.assetBytes[i]))
    assert.ok(h.end >= quiet.end)
  }
  assert.ok(after.end - Date.now() <= 0)

  const small = await startDemoSite({ port: 0, clientDir: tmp, historySeconds: 60 })
  t.after(() => small.close())
  await Promise.all(Array.from({ length: 50 }, () => fetch(`${small.url}/img/p01.png`).then((r) => r.arrayBuffer())))
  const h = await (await fetch(`${small.url}/origin-stats/history`)).json()
  assert.equal(h.requests.length, 60)
  assert.equal(sum(h.requests), 50)
  assert.match(await (await fetch(`${small.url}/dashboard`)).text(), /<select id="window"><option value="60">1 min<\/option><\/select>/)
  site.resetStats()
  assert.equal(sum(site.history().requests), 0, 'a reset clears the history too')
})

test('options are validated', async () => {
  await assert.rejects(startDemoSite({ port: 0, coordinatorUrl: 'http://127.0.0.1:7070' }), TypeError)
  await assert.rejects(startDemoSite({ port: -1 }), TypeError)
  for (const historySeconds of [59, 3601, 600.5]) await assert.rejects(startDemoSite({ port: 0, historySeconds }), /historySeconds must be an integer from 60 to 3600/)
})

test('Chromium decodes every product image', { timeout: 30_000 }, async (t) => {
  if (!existsSync('/usr/bin/chromium')) return t.skip('/usr/bin/chromium not found (see TEST-ENV.md)')
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] })
  t.after(() => browser.close())
  const page = await browser.newPage()
  // Block the client so that this checks the images alone; then do what it does: set src.
  await page.route('**/maygh-elements.js', (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: '' }))
  await page.goto(`${site.url}/elements`)
  const result = await page.evaluate(async () => {
    const imgs = [...document.querySelectorAll('img[data-maygh-src]')].map((img) => /** @type {HTMLImageElement} */ (img))
    await Promise.all(imgs.map((img) => { img.src = img.dataset.mayghSrc ?? ''; return img.decode() }))
    return imgs.map((img) => ({ w: img.naturalWidth, attr: Number(img.getAttribute('width')) }))
  })
  assert.ok(result.length >= 30)
  for (const { w, attr } of result) assert.ok(w > 0 && w === attr, `naturalWidth ${w} vs width=${attr}`)
})

test('a distant origin (npm start\'s): its own responses a round trip later (two on a new connection) and paced, the instrument not; the page says so', async () => {
  await assert.rejects(startDemoSite({ port: 0, link: { rttMs: -1, mbps: 5 } }), TypeError)
  await assert.rejects(startDemoSite({ port: 0, link: { rttMs: 10, mbps: 0 } }), /link must be null or/)
  const far = await startDemoSite({ port: 0, host: '127.0.0.1', link: { rttMs: 150, mbps: 8 } })
  try {
    const bytes = (await readFile(join(DEFAULT_PUBLIC_DIR, 'img/p01.png'))).length
    const t0 = performance.now()
    const image = await fetch(`${far.url}/img/p01.png`, { headers: { connection: 'close' } })
    assert.equal((await image.arrayBuffer()).byteLength, bytes)
    // two round trips on a new connection, and the body at 1 MB/s
    assert.ok(performance.now() - t0 >= 300 + bytes / 1e3 * 0.9, `${(performance.now() - t0).toFixed(0)} ms`)
    assert.equal(far.stats().byPath['/img/p01.png'].bytes, bytes, 'counted as it left')
    const page = await (await fetch(`${far.url}/`)).text()
    assert.match(page, /answers as if it were 150 ms away at 8 Mbit\/s/)
    const t1 = performance.now()
    await (await fetch(`${far.url}/origin-stats`)).json()
    assert.ok(performance.now() - t1 < 150, 'the instrument is not behind the link')
  } finally {
    await far.close()
  }
})

test('maygh-demo reads how far its origin acts from ORIGIN_RTT_MS / ORIGIN_MBPS, as npm start does', async () => {
  const { demoOptionsFrom } = await import('../bin/maygh-demo.js')
  assert.deepEqual(demoOptionsFrom({}).link, { rttMs: 80, mbps: 5 })
  assert.deepEqual(demoOptionsFrom({ ORIGIN_RTT_MS: '200', ORIGIN_MBPS: '2' }).link, { rttMs: 200, mbps: 2 })
  assert.equal(demoOptionsFrom({ ORIGIN_RTT_MS: '0' }).link, null)
  assert.throws(() => demoOptionsFrom({ ORIGIN_RTT_MS: 'far' }), /ORIGIN_RTT_MS must be a number/)
  assert.throws(() => demoOptionsFrom({ ORIGIN_MBPS: '-1' }), /ORIGIN_MBPS above 0/)
})
