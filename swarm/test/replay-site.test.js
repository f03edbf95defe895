/* global window */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { chromium } from 'playwright-core'
import { sriHash } from '../../client/manifest.js'
import { ERRORS, matches } from '../../protocol/index.js'
import { MIN_BYTES, assetBytes } from '../src/asset-bytes.js'
import { startReplaySite } from '../src/replay-site.js'
import { checkGif, checkJpeg, checkPng } from '../../test/support/image-checks.js'
import { request } from 'node:http'
import { rawRequest } from '../../test/support/raw-http.js'

const BUNDLE = '/* fake maygh client for tests */\n'
const BIG = 40 * 1024 * 1024
/** @type {Map<string, { bytes: number, type: string }>} */
const ASSETS = new Map([
  ['/images/ksclogo-medium.gif', { bytes: 5866, type: '' }],
  ['/images/tiny.gif', { bytes: 10, type: 'image/gif' }],
  ['/images/photo.jpg', { bytes: 70000, type: '' }],
  ['/images/icon.png', { bytes: 300, type: '' }],
  ['/images/logo.svg', { bytes: 2000, type: '' }],
  ['/images/old.xbm', { bytes: 900, type: '' }],
  ['/images/with space.gif', { bytes: 1000, type: '' }],
  ['/style/site.css', { bytes: 1234, type: '' }],
  ['/js/app.js', { bytes: 4321, type: 'application/x-javascript' }],
  ['/video/launch.mpg', { bytes: 300000, type: '' }],
  ['/video/big.mpg', { bytes: BIG, type: '' }],
  ['/audio/countdown.au', { bytes: 50000, type: '' }]
])
const OTHERS = new Map([['/cgi-bin/imagemap/countdown?107,144', 1500], ['/shuttle/press-kit.txt', 20000]])
const VIEW_ASSETS = [...ASSETS.keys()].filter((p) => p !== '/video/big.mpg')
const VIEWS = new Map([
  ['/_view/0', { bytes: 8000, assets: VIEW_ASSETS }],
  ['/_view/1', { bytes: 0, assets: ['/images/ksclogo-medium.gif'] }],
  ['/_view/2', { bytes: 1500, assets: ['/images/ksclogo-medium.gif', '/shuttle/press-kit.txt'] }]
])
const COORDINATOR = 'ws://127.0.0.1:7070/ws'

/** @type {Awaited<ReturnType<typeof startReplaySite>>} */
let site
let tmp = ''

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'maygh-replay-'))
  await writeFile(join(tmp, 'maygh.js'), BUNDLE)
  site = await startReplaySite({ assets: ASSETS, views: VIEWS, others: OTHERS, coordinator: COORDINATOR, clientDir: tmp, clientData: { 'hedge-min-ms': '500' } })
})
after(async () => {
  await site?.close()
  await rm(tmp, { recursive: true, force: true })
})

/**
 * One request, its whole body read.
 * @param {string} path
 * @param {{ method?: string, headers?: Record<string, string> }} [init]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }>}
 */
function get (path, { method = 'GET', headers = {} } = {}) {
  return rawRequest(site.port, method, path, headers)
}

/**
 * GET a path, read its first chunk, go away; wait for the site to see the response end.
 * @param {typeof site} origin
 * @param {string} path
 * @returns {Promise<{ received: number, event: import('../src/replay-site.js').ResponseEvent }>}
 */
async function abortAfterFirstChunk (origin, path) {
  const ended = once(origin.events, 'response')
  let received = 0
  await new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: origin.port, path }, (res) => {
      res.once('data', (chunk) => {
        received = chunk.length
        req.destroy()
        resolve(undefined)
      })
    })
    req.on('error', () => {})
    req.end()
  })
  const [event] = await ended
  return { received, event }
}

test('asset bytes: every format at every size is exactly that size, valid, and deterministic', () => {
  const checks = { gif: checkGif, png: checkPng, jpeg: checkJpeg }
  const sizes = [...Array(400).keys(), 1000, 65537 + 137 - 1, 65537 + 137, 65537 + 137 + 1, 65537 + 137 + 3, 65537 + 137 + 4, 131074 + 137 + 2, 300001]
  for (const format of /** @type {const} */ (['gif', 'png', 'jpeg', 'svg', 'css', 'js', 'random'])) {
    for (const size of sizes) {
      const bytes = assetBytes(`/x/${size}`, size, format)
      assert.equal(bytes.length, Math.max(size, MIN_BYTES[/** @type {keyof typeof MIN_BYTES} */ (format)] ?? 0), `${format} of ${size}`)
      if (format in checks) checks[/** @type {keyof typeof checks} */ (format)](bytes)
    }
  }
  assert.match(assetBytes('/a.css', 200, 'css').toString('latin1'), /^\/\*[A-Za-z0-9+/]{196}\*\/$/)
  assert.match(assetBytes('/a.js', 200, 'js').toString('latin1'), /^\/\*[A-Za-z0-9+/]{196}\*\/$/)
  assert.match(assetBytes('/a.svg', 200, 'svg').toString('latin1'), /^<svg [^>]*><!--[A-Za-z0-9+/]+--><\/svg>\n$/)
  assert.deepEqual(assetBytes('/same', 5000, 'jpeg'), assetBytes('/same', 5000, 'jpeg'))
  assert.notDeepEqual(assetBytes('/same', 5000, 'random'), assetBytes('/other', 5000, 'random'))
  const media = assetBytes('/v.mpg', 100000, 'random')
  assert.ok(gzipSync(media).length > media.length, 'pseudo-random bytes do not compress')
})

test('every asset is served at its logged size, and the manifest names exactly the bytes served', async () => {
  const res = await get('/maygh-manifest.json')
  assert.equal(res.status, 200)
  const manifest = JSON.parse(res.body.toString())
  assert.deepEqual(manifest, site.manifest)
  assert.equal(manifest.version, 1)
  assert.deepEqual(Object.keys(manifest.assets).sort(), [...ASSETS.keys()].map((p) => p.replace(' ', '%20')).sort())
  for (const [path, { bytes }] of ASSETS) {
    const url = path.replace(' ', '%20')
    const { status, headers, body } = await get(url)
    assert.equal(status, 200, path)
    assert.equal(body.length, path === '/images/tiny.gif' ? MIN_BYTES.gif : bytes, path)
    assert.equal(headers['content-length'], String(body.length))
    assert.equal(manifest.assets[url].size, body.length)
    assert.equal(manifest.assets[url].type, headers['content-type'])
    assert.ok(await matches(body, manifest.assets[url].hash), path)
    assert.equal(headers.etag, `"${sriHash(body)}"`)
    assert.equal(headers['cache-control'], 'no-cache')
    assert.equal(headers['accept-ranges'], 'bytes')
  }
  const types = Object.fromEntries(Object.entries(manifest.assets).map(([p, e]) => [p, /** @type {any} */ (e).type]))
  assert.equal(types['/images/photo.jpg'], 'image/jpeg')
  assert.equal(types['/video/launch.mpg'], 'video/mpeg')
  assert.equal(types['/js/app.js'], 'application/x-javascript', "the log's type wins")
  checkGif((await get('/images/ksclogo-medium.gif')).body)
  checkGif((await get('/images/tiny.gif')).body)
  checkJpeg((await get('/images/photo.jpg')).body)
  assert.equal(checkPng((await get('/images/icon.png')).body).colorType, 0)
  const other = await get('/cgi-bin/imagemap/countdown?107,144')
  assert.equal(other.body.length, 1500)
  assert.equal((await get('/shuttle/press-kit.txt')).body.length, 20000)
  assert.equal(manifest.assets['/shuttle/press-kit.txt'], undefined, 'other URLs are not assets')
})

test('view pages embed every asset as a page would, at the logged size, with or without the script tag', async () => {
  const { status, headers, body } = await get('/_view/0')
  assert.equal(status, 200)
  assert.equal(headers['content-type'], 'text/html; charset=utf-8')
  assert.equal(body.length, 8000)
  const html = body.toString()
  assert.ok(html.startsWith('<!doctype html>'))
  assert.ok(html.includes(`<script src="/maygh.js" data-coordinator="${COORDINATOR}" data-hedge-min-ms="500" async></script>`))
  const embedded = [...html.matchAll(/<(img|link|script|a)\b[^>]*(?:src|href)="([^"]+)"[^>]*data-replay="(\w+)"/g)].map((m) => [m[1], m[2], m[3]])
  assert.deepEqual(embedded, [
    ['img', '/images/ksclogo-medium.gif', 'image'],
    ['img', '/images/tiny.gif', 'image'],
    ['img', '/images/photo.jpg', 'image'],
    ['img', '/images/icon.png', 'image'],
    ['img', '/images/logo.svg', 'image'],
    ['img', '/images/old.xbm', 'image'],
    ['img', '/images/with%20space.gif', 'image'],
    ['link', '/style/site.css', 'style'],
    ['script', '/js/app.js', 'script'],
    ['a', '/video/launch.mpg', 'media'],
    ['a', '/audio/countdown.au', 'media']
  ])
  assert.match(html, /<!--[A-Za-z0-9+/]+-->\n<\/body><\/html>\n$/, 'padded with a comment')

  const bare = await get('/_view/0?maygh=0')
  assert.equal(bare.body.length, 8000)
  assert.ok(!bare.body.toString().includes('maygh.js'), 'no script tag')
  assert.equal(bare.body.toString().match(/data-replay="/g)?.length, VIEW_ASSETS.length)

  const token = await get('/_view/0?token=' + encodeURIComponent('a"b<c>&d'))
  assert.equal(token.body.length, 8000)
  assert.ok(token.body.toString().includes(' data-token="a&#34;b&#60;c&#62;&#38;d" async>'))

  const unpadded = (await get('/_view/1')).body.toString()
  assert.match(unpadded, /<img src="\/images\/ksclogo-medium.gif" alt="" data-replay="image">\n<\/body><\/html>\n$/, 'no padding when the log shows no HTML')
  assert.match((await get('/_view/2')).body.toString(), /<a hidden href="\/shuttle\/press-kit.txt" data-replay="fetch"><\/a>/)
  const head = await get('/_view/0', { method: 'HEAD' })
  assert.equal(head.headers['content-length'], '8000')
  assert.equal(head.body.length, 0)
})

test('ranges: 206 with the right bytes, 416 past the end, the whole body when the range cannot be used', async () => {
  const whole = (await get('/video/launch.mpg')).body
  const open = await get('/video/launch.mpg', { headers: { Range: 'bytes=0-' } })
  assert.equal(open.status, 206)
  assert.equal(open.headers['content-range'], `bytes 0-${whole.length - 1}/${whole.length}`)
  assert.deepEqual(open.body, whole)
  const mid = await get('/video/launch.mpg', { headers: { Range: 'bytes=1000-1999' } })
  assert.equal(mid.status, 206)
  assert.equal(mid.headers['content-length'], '1000')
  assert.deepEqual(mid.body, whole.subarray(1000, 2000))
  const tail = await get('/images/photo.jpg', { headers: { Range: 'bytes=-10' } })
  assert.deepEqual([tail.status, [...tail.body.subarray(-2)]], [206, [0xff, 0xd9]])
  const past = await get('/video/launch.mpg', { headers: { Range: `bytes=${whole.length}-` } })
  assert.deepEqual([past.status, past.headers['content-range'], past.body.length], [416, `bytes */${whole.length}`, 0])
  assert.equal((await get('/video/launch.mpg', { headers: { Range: 'bytes=0-1,5-6' } })).status, 200, 'several ranges: all of it')
  assert.equal((await get('/video/launch.mpg', { headers: { Range: 'bytes=0-9', 'If-Range': '"sha256-old"' } })).status, 200, 'If-Range of another version')
  const etag = String(open.headers.etag)
  assert.equal((await get('/video/launch.mpg', { headers: { Range: 'bytes=0-9', 'If-Range': etag } })).body.length, 10)
})

test('counting: bytes and requests by kind and asset, HEAD and 304 at 0 bytes, aborted downloads as far as they went', async () => {
  site.resetStats()
  const gif = await get('/images/ksclogo-medium.gif')
  const etag = String(gif.headers.etag)
  assert.equal((await get('/images/ksclogo-medium.gif', { headers: { 'If-None-Match': etag } })).status, 304)
  assert.equal((await get('/images/ksclogo-medium.gif', { method: 'HEAD' })).status, 200)
  await get('/_view/0')
  await get('/video/launch.mpg', { headers: { Range: 'bytes=0-99' } })
  await get('/shuttle/press-kit.txt')
  const manifest = await get('/maygh-manifest.json')
  await get('/maygh.js')
  const missing = await get('/nope.gif')
  let s = site.stats()
  assert.deepEqual(s.byKind, {
    view: { requests: 1, bytes: 8000 },
    asset: { requests: 3, bytes: 5866 },
    media: { requests: 1, bytes: 100 },
    other: { requests: 1, bytes: 20000 },
    maygh: { requests: 2, bytes: manifest.body.length + BUNDLE.length },
    error: { requests: 1, bytes: missing.body.length }
  })
  assert.deepEqual(s.byAsset, { '/images/ksclogo-medium.gif': { requests: 3, bytes: 5866 }, '/video/launch.mpg': { requests: 1, bytes: 100 } })
  assert.equal(s.requests, 9)
  assert.equal(s.bytes, 8000 + 5866 + 100 + 20000 + manifest.body.length + BUNDLE.length + missing.body.length)
  assert.equal(s.notModified, 1)
  assert.equal(s.aborted, 0)

  // A client that goes away after the first bytes of a 40 MB video: counted only as far as the
  // socket took it (up to its send buffer: a few MB on loopback).
  site.resetStats()
  const cut = await abortAfterFirstChunk(site, '/video/big.mpg')
  assert.equal(cut.event.complete, false)
  s = site.stats()
  assert.equal(s.aborted, 1)
  assert.equal(s.byKind.media.bytes, cut.event.bytes)
  assert.ok(cut.event.bytes >= cut.received, `counted ${cut.event.bytes} ≥ received ${cut.received}`)
  assert.ok(cut.event.bytes < BIG / 2, `counted ${cut.event.bytes} of ${BIG}`)
  site.resetStats()
  assert.deepEqual([site.stats().requests, site.stats().bytes, site.stats().byAsset], [0, 0, {}])
})

test('a paced origin counts an aborted download to within a few chunks of what the client read', async () => {
  const size = 4 * 1024 * 1024
  const paced = await startReplaySite({ assets: new Map([['/v.mpg', { bytes: size, type: '' }]]), views: new Map(), coordinator: COORDINATOR, link: { rttMs: 0, mbps: 8 } })
  try {
    const cut = await abortAfterFirstChunk(paced, '/v.mpg')
    assert.equal(cut.event.complete, false)
    assert.ok(cut.event.bytes >= cut.received && cut.event.bytes < size / 8, `counted ${cut.event.bytes}, received ${cut.received}`)
    assert.deepEqual(paced.stats().byAsset, { '/v.mpg': { requests: 1, bytes: cut.event.bytes } })
  } finally {
    await paced.close()
  }
})

test('errors are coded: unknown path 404, other methods 405, an unbuilt bundle 503', async () => {
  for (const [path, method, code, status] of /** @type {const} */ ([
    ['/nope.gif', 'GET', 'MGH_DEMO_NOT_FOUND', 404],
    ['/_view/99', 'GET', 'MGH_DEMO_NOT_FOUND', 404],
    ['/images/ksclogo-medium.gif', 'POST', 'MGH_DEMO_METHOD_NOT_ALLOWED', 405],
    ['/maygh-sw.js', 'GET', 'MGH_DEMO_CLIENT_NOT_BUILT', 503]
  ])) {
    const res = await get(path, { method })
    assert.equal(res.status, status, path)
    assert.equal(ERRORS[code].status, status)
    assert.deepEqual(JSON.parse(res.body.toString()), { error: { code, message: ERRORS[code].message } })
  }
  await assert.rejects(startReplaySite({ assets: new Map(), views: new Map([['/_view/0', { bytes: 0, assets: ['/x.gif'] }]]), coordinator: COORDINATOR }), TypeError)
})

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

test('a browser loads a view: replayDone resolves with every asset loaded, media by Range', { skip: !existsSync(CHROMIUM) && 'no Chromium' }, async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  try {
    const page = await browser.newPage()
    site.resetStats()
    await page.goto(`${site.url}/_view/0?maygh=0`)
    const result = await page.evaluate(() => /** @type {any} */ (window).replayDone)
    assert.equal(result.assets.length, VIEW_ASSETS.length)
    const failed = result.assets.filter((/** @type {any} */ a) => !a.ok).map((/** @type {any} */ a) => a.url)
    assert.deepEqual(failed, [`${site.url}/images/old.xbm`], 'all but the XBM (random bytes: browsers no longer decode XBM) load')
    assert.ok(result.assets.every((/** @type {any} */ a) => a.duration !== null), 'each has its resource timing')
    const s = site.stats()
    assert.equal(s.byKind.media.bytes, 300000 + 50000)
    assert.equal(s.byKind.maygh.requests, 0)
    assert.equal(s.byKind.error.requests, 0, 'no favicon or other stray request')
  } finally {
    await browser.close()
  }
})
