// What peers may serve: static assets by extension or content type by default, `--assets all`,
// a regex; what was counted and left out, in requests and bytes, in the JSON and the summary.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_MEDIA, FLAG_PAGE } from '../src/batch.js'
import { resolveConfig } from '../src/config.js'
import { isBlockingContentType, isBlockingUrl, isMediaContentType, isStaticContentType, isStaticUrl, urlExtension } from '../src/input/static-assets.js'
import { TraceReader } from '../src/input/trace-reader.js'
import { runCli } from './run-cli.js'

const EPA = fileURLToPath(new URL('../../../shared/traces/epa-http.zip', import.meta.url))
const skipTraces = existsSync(EPA) ? false : `shared traces not found at ${EPA}`

/** @param {string[]} args */
const run = (args) => runCli(['--no-progress', ...args])

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'maygh-sim-assets-')) })
after(async () => { await rm(dir, { recursive: true, force: true }) })

/**
 * @param {string} path
 * @param {object} [options]
 * @returns {Promise<{ reader: TraceReader, flags: number[] }>}
 */
async function flagsOf (path, options) {
  const reader = new TraceReader(path, options)
  const flags = []
  for await (const b of reader.batches()) for (let i = 0; i < b.n; i++) flags.push(b.flags[i])
  return { reader, flags }
}

test('extensions: case ignored, query string and fragment ignored, only the last segment counts', () => {
  for (const url of ['/a/B.GIF', '/img/x.jpg?v=3', '/s/site.CSS', '/app.js#top', '/f/font.woff2', '/x.svg;jsessionid=1', 'http://h.example/clip.mp4', '/icons/blank.xbm']) {
    assert.ok(isStaticUrl(url), url)
  }
  for (const url of ['/', '/index.html', '/cgi-bin/search.pl', '/dir.v2/', '/data.json', '/doc.pdf', '/page?f=x.gif', '/Region5/']) {
    assert.ok(!isStaticUrl(url), url)
  }
  assert.equal(urlExtension('/a.b/c.PNG?x=1'), 'png')
  assert.equal(urlExtension('/a.b/c'), '')
})

test('content types', () => {
  for (const t of ['image/png', 'IMAGE/SVG+XML', 'text/css; charset=utf-8', 'text/javascript', 'application/javascript', 'font/woff2', 'video/mp4', 'audio/mpeg']) {
    assert.ok(isStaticContentType(t), t)
  }
  for (const t of ['text/html', 'application/json', 'text/plain', 'application/pdf', '']) assert.ok(!isStaticContentType(t), t)
  // styles, scripts and fonts block rendering (the hedge rule's 'blocking'); audio and video are media
  for (const t of ['text/css; charset=utf-8', 'Text/JavaScript', 'application/javascript', 'application/x-javascript', 'font/woff2', 'application/font-woff', 'application/vnd.ms-fontobject']) {
    assert.ok(isBlockingContentType(t), t)
    assert.ok(!isMediaContentType(t), t)
  }
  for (const t of ['image/png', 'image/svg+xml', 'video/mp4', 'audio/mpeg', 'text/html', 'text/plain', '']) assert.ok(!isBlockingContentType(t), t)
  for (const t of ['video/mp4', ' AUDIO/mpeg']) assert.ok(isMediaContentType(t), t)
})

test('styles, scripts and fonts by extension', () => {
  for (const url of ['/s/site.CSS?v=2', '/app.js#top', '/m/mod.mjs', '/f/a.woff', '/f/a.woff2', '/f/a.ttf', '/f/a.otf', '/f/a.eot']) assert.ok(isBlockingUrl(url), url)
  for (const url of ['/a/B.GIF', '/x.svg', '/clip.mp4', '/index.html', '/', '/page?f=x.css', '/data.json']) assert.ok(!isBlockingUrl(url), url)
})

const LOG = [
  '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /index.html HTTP/1.0" 200 1000',
  '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /img/Logo.GIF?v=2 HTTP/1.0" 200 2000',
  '10.0.0.1 - - [10/Oct/2000:13:55:37 +0000] "GET /cgi-bin/find?q=a.gif HTTP/1.0" 200 400',
  '10.0.0.2 - - [10/Oct/2000:13:55:38 +0000] "GET /img/Logo.GIF?v=2 HTTP/1.0" 304 0',
  '10.0.0.2 - - [10/Oct/2000:13:55:39 +0000] "GET /site.css HTTP/1.0" 404 300',
  '10.0.0.2 - - [10/Oct/2000:13:55:40 +0000] "GET /site.css HTTP/1.0" 200 700'
].join('\n')

test('by default only static assets count; --assets all and a regex override', async () => {
  const path = join(dir, 'mixed.log')
  await writeFile(path, LOG)
  const byDefault = await flagsOf(path)
  // page views: GETs of pages (no extension, or a page's: CGI output too) answered 200 or 304
  // a stylesheet blocks rendering (the client's hedge rule races it with the origin)
  assert.deepEqual(byDefault.flags, [FLAG_PAGE, FLAG_ASSET, FLAG_PAGE, 0, 0, FLAG_ASSET | FLAG_BLOCKING])
  assert.deepEqual(byDefault.reader.summary().leftOut, { notServable: { requests: 2, bytes: 300 }, notAsset: { requests: 2, bytes: 1400 } })
  assert.deepEqual((await flagsOf(path, { assets: 'all' })).flags, [FLAG_ASSET | FLAG_PAGE, FLAG_ASSET, FLAG_ASSET | FLAG_PAGE, 0, 0, FLAG_ASSET | FLAG_BLOCKING])
  assert.deepEqual((await flagsOf(path, { assets: '^/cgi-bin/' })).flags, [FLAG_PAGE, 0, FLAG_ASSET | FLAG_PAGE, 0, 0, 0])
  assert.throws(() => resolveConfig({ assets: '' }), { code: 'MGH_SIM_ERR_BAD_VALUE', message: /--assets all/ })
  assert.throws(() => resolveConfig({ assets: '(' }), { code: 'MGH_SIM_ERR_BAD_VALUE' })
})

test('a CSV content_type decides where the log gives one; `-` or empty falls back to the extension', async () => {
  const path = join(dir, 'typed.csv')
  await writeFile(path, [
    'ts_unix,client,url,status,bytes,content_type',
    '1,a,/photo?id=3,200,500,image/jpeg',
    '2,a,/x.gif,200,500,text/html; charset=utf-8',
    '3,b,/y.gif,200,500,-',
    '4,b,/page,200,500,',
    '5,b,/app.js,200,500,"text/javascript"'
  ].join('\n'))
  // `/page` is a page view; `/photo?id=3` would be by its URL, but its content type says it is an image
  assert.deepEqual((await flagsOf(path)).flags, [FLAG_ASSET, 0, FLAG_ASSET, FLAG_PAGE, FLAG_ASSET | FLAG_BLOCKING])
  // a rule other than the default is about URLs: the content type is not consulted
  assert.deepEqual((await flagsOf(path, { assets: '\\.gif$' })).flags, [0, FLAG_ASSET, FLAG_ASSET, FLAG_PAGE, 0])
})

test('styles, scripts and fonts are marked render-blocking by URL or by the content type the line gives', async () => {
  const path = join(dir, 'blocking.csv')
  await writeFile(path, [
    'ts_unix,client,url,status,bytes,content_type',
    '1,a,/site.css,200,500,',
    '2,a,/app.js?v=3,200,500,',
    '3,a,/f/icons.woff2,200,500,',
    '4,a,/bundle?id=7,200,500,text/css',
    '5,a,/bundle?id=8,200,500,application/javascript; charset=utf-8',
    '6,a,/font?family=x,200,500,font/woff2',
    '7,a,/logo.png,200,500,',
    '8,a,/img?id=2,200,500,image/png',
    '9,a,/site.css,304,0,'
  ].join('\n'))
  const B = FLAG_ASSET | FLAG_BLOCKING
  assert.deepEqual((await flagsOf(path)).flags, [B, B, B, B, B, B, FLAG_ASSET, FLAG_ASSET, 0])
  // an NCSA log has no content types: the extension alone
  const clf = join(dir, 'blocking.log')
  await writeFile(clf, [
    '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /s/Main.CSS HTTP/1.0" 200 1000',
    '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /lib/a.mjs HTTP/1.0" 200 1000',
    '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /fonts/b.ttf HTTP/1.0" 200 1000',
    '10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /img/c.gif HTTP/1.0" 200 1000'
  ].join('\n'))
  assert.deepEqual((await flagsOf(clf)).flags, [B, B, B, FLAG_ASSET])
})

test('audio and video assets are marked by URL or by the content type the line gives', async () => {
  const path = join(dir, 'media.csv')
  await writeFile(path, [
    'ts_unix,client,url,status,bytes,content_type',
    '1,a,/clip.MPG,200,5000,',
    '2,a,/stream?id=1,200,5000,video/mp4',
    '3,a,/talk.mp3,200,5000,audio/mpeg',
    '4,a,/photo.jpg,200,500,image/jpeg',
    '5,a,/clip.mpg,206,500,', // a partial response is not served by peers at all
    '6,a,/notes.txt,200,50,'
  ].join('\n'))
  const M = FLAG_ASSET | FLAG_MEDIA
  assert.deepEqual((await flagsOf(path)).flags, [M, M, M, FLAG_ASSET, 0, 0])
  // under --assets all the media bit still marks audio and video, by URL or type
  assert.deepEqual((await flagsOf(path, { assets: 'all' })).flags, [M, M, M, FLAG_ASSET, 0, FLAG_ASSET])
})

test('the JSON and the summary say what was counted and what was left out', async () => {
  const path = join(dir, 'mixed.log')
  await writeFile(path, LOG)
  const { code, stdout } = await run(['--trace', path, '--json'])
  assert.equal(code, 0)
  const r = JSON.parse(stdout)
  assert.deepEqual(r.counted, { rule: 'static assets (images, CSS, JS, fonts, media) by extension or content type', requests: 2, bytes: 2700 })
  assert.deepEqual(r.leftOut, { requests: 4, bytes: 1700, notServable: { requests: 2, bytes: 300 }, notAsset: { requests: 2, bytes: 1400 } })
  assert.equal(r.counted.requests + r.leftOut.requests, r.requests)
  assert.equal(r.counted.bytes + r.leftOut.bytes, r.bytes)
  const text = (await run(['--trace', path])).stdout
  assert.match(text, /\ncounted \(peers could serve them\): 2 requests, 2\.7 kB; rule: static assets/)
  assert.match(text, /\nleft out \(the origin serves them; still in the totals\): 4 requests, 1\.7 kB; of which 2 requests, 300 B not a 200 GET with a body .*, 2 requests, 1\.4 kB not a static asset \(pages, CGI, other\)/)
  const all = JSON.parse((await run(['--trace', path, '--json', '--assets', 'all'])).stdout)
  assert.deepEqual(all.counted, { rule: 'every successful GET (--assets all)', requests: 4, bytes: 4100 })
})

test('the EPA log: static assets by default, every successful GET with --assets all', { skip: skipTraces }, async () => {
  const byDefault = JSON.parse((await run(['--trace', EPA, '--json'])).stdout)
  assert.equal(byDefault.counted.requests, 18_096)
  assert.equal(byDefault.leftOut.notAsset.requests, 17_119)
  assert.equal(byDefault.leftOut.notServable.requests, 12_533)
  const all = JSON.parse((await run(['--trace', EPA, '--json', '--assets', 'all'])).stdout)
  assert.equal(all.counted.requests, 35_215)
  assert.equal(all.leftOut.notAsset.requests, 0)
  // pages and CGI were most of what `all` counted: counting only static assets saves far less
  assert.ok(byDefault.savings < all.savings / 2, `${byDefault.savings} vs ${all.savings}`)
})
