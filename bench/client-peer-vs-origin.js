#!/usr/bin/env node
/**
 * How long `Maygh.load()` takes for a 100 KB asset from a peer versus from
 * the origin, on loopback, in Chromium: median (and p90) over N distinct
 * assets. Both paths include hashing and the IndexedDB store; the peer path
 * also includes the coordinator lookup. The first peer load, which also sets
 * up the WebRTC connection, is reported on its own.
 *
 *   node bench/client-peer-vs-origin.js [--runs 40] [--kb 100]
 *
 * Run it inside the loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/client-peer-vs-origin.js
 */
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildClient } from '../client/build.js'
import { sriHash } from '../client/manifest.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { launchBrowser } from '../test/support/browsers.js'
import { upperPercentile } from './stats.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '40' }, kb: { type: 'string', default: '100' } } })
const runs = Number(values.runs)
const size = Number(values.kb) * 1000

const dir = await mkdtemp(join(tmpdir(), 'maygh-bench-'))
const { outdir } = await buildClient({ outdir: dir })
const bundle = await readFile(join(outdir, 'maygh-elements.js'))
const coordinator = await startCoordinator({ port: 0, stunPort: 0 })

/** @type {Map<string, Buffer>} */
const files = new Map()
for (let i = 0; i < runs; i++) files.set(`/a/${i}.bin`, randomBytes(size))
const manifest = { version: 1, assets: Object.fromEntries([...files].map(([path, bytes]) => [path, { hash: sriHash(bytes), size: bytes.length, type: 'application/octet-stream' }])) }
const page = `<!doctype html><script src="/maygh-elements.js" data-coordinator="${coordinator.url}" defer></script>`
const server = createServer((req, res) => {
  const body = req.url === '/' ? page : req.url === '/maygh-elements.js' ? bundle : req.url === '/maygh-manifest.json' ? JSON.stringify(manifest) : files.get(/** @type {string} */ (req.url))
  if (body === undefined) {
    res.writeHead(404).end()
    return
  }
  res.writeHead(200, { 'cache-control': 'no-store' }).end(body)
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
const url = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}/`

/** Load every asset one after another in a fresh browser; the `load` events' timings. */
async function visit () {
  const browser = await launchBrowser('chromium')
  const p = await (await browser.newContext()).newPage()
  await p.goto(url)
  const events = await p.evaluate(async (paths) => {
    const M = /** @type {any} */ (globalThis).Maygh
    await M.ready
    const out = []
    M.on('load', (/** @type {any} */ e) => out.push({ source: e.source, ms: e.ms }))
    for (const path of paths) await M.load(path)
    await M.idle()
    return out
  }, [...files.keys()])
  return { browser, events }
}

try {
  const a = await visit()
  const b = await visit()
  const origin = a.events.filter((e) => e.source === 'origin').map((e) => e.ms)
  const peer = b.events.filter((e) => e.source === 'peer').map((e) => e.ms)
  const fmt = (/** @type {number} */ ms) => ms.toFixed(1).padStart(7) + ' ms'
  console.log(`${runs} × ${size / 1000} KB, Chromium on loopback, Maygh.load() end to end`)
  // The upper median and p90 (bench/stats.js): the README's figures were printed with them.
  console.log(`origin  median ${fmt(upperPercentile(origin, 0.5))}  p90 ${fmt(upperPercentile(origin, 0.9))}  (n=${origin.length})`)
  if (peer.length) {
    const open = peer.slice(1)
    console.log(`peer    median ${fmt(upperPercentile(open, 0.5))}  p90 ${fmt(upperPercentile(open, 0.9))}  (n=${open.length}, open channel)`)
    console.log(`peer    first  ${fmt(peer[0])}  (includes connection set-up)`)
  }
  if (peer.length !== runs) console.log(`warning: only ${peer.length} of ${runs} loads came from the peer`)
  await a.browser.close()
  await b.browser.close()
} finally {
  server.close()
  await coordinator.close()
  await rm(dir, { recursive: true, force: true })
}
