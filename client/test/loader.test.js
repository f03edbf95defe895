/**
 * The load path's decisions (loader.js, peer-fetch.js, hedge.js), in Node with
 * stand-ins for IndexedDB, the coordinator and the peers, and a real HTTP
 * origin: which source wins, what gets stored, that bad bytes are never
 * returned from a peer, and when the origin is asked alongside peers (hedging).
 * Last, the lookup through the real coordinator connection over a fake
 * WebSocket: across a coordinator's death, under its rate limit, and with
 * every coordinator refusing the connection.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { sriHash } from '../manifest.js'
import { Names } from '../src/names.js'
import { Stats } from '../src/stats.js'
import { Loader } from '../src/loader.js'
import { PeerFetch } from '../src/peer-fetch.js'
import { SLOTS_PER_PEER, WINDOW_BYTES } from '../src/peer-slots.js'
import { Emitter } from '../src/emitter.js'
import { OriginClock } from '../src/hedge.js'
import { Reach } from '../src/reach.js'
import { UNREACHED_AFTER } from '../../policy/hedge-rule.js'
import { Signaling } from '../src/signaling.js'
import { FakeWebSocket } from './fake-websocket.js'

const good = randomBytes(30_000)
const other = randomBytes(20_000)
const stale = randomBytes(10_000)
/** what the origin serves, by path */
const files = { '/good.png': good, '/other.png': other, '/stale.png': stale, '/unnamed.txt': Buffer.from('hello') }
/** @type {{ release: () => void, aborted: boolean }[]} requests for /slow.png, held until released */
let slow = []
const manifest = {
  version: 1,
  assets: {
    '/good.png': { hash: sriHash(good), size: good.length, type: 'image/png' },
    '/other.png': { hash: sriHash(other), size: other.length, type: 'image/png' },
    // the manifest names different bytes than the origin now serves
    '/stale.png': { hash: sriHash(randomBytes(10_000)), size: 10_000, type: 'image/png' }
  }
}
/** @type {{ release: () => void }[]} requests for /trickled.png: its first KB sent, the rest held until released */
let trickled = []
/** @type {Record<string, number>} origin requests by path */
let hits = {}
/** @type {import('node:http').Server} */
let server

before(async () => {
  server = createServer((req, res) => {
    const path = /** @type {string} */ (req.url)
    hits[path] = (hits[path] ?? 0) + 1
    if (path === '/maygh-manifest.json') {
      res.end(JSON.stringify({ ...manifest, assets: { ...manifest.assets, '/slow.png': manifest.assets['/good.png'], '/trickled.png': manifest.assets['/good.png'] } }))
      return
    }
    if (path === '/trickled.png') {
      res.writeHead(200, { 'content-length': String(good.length) }).write(good.subarray(0, 1000))
      trickled.push({ release: () => res.end(good.subarray(1000)) })
      return
    }
    if (path === '/slow.png') {
      // The origin's answer to this one waits until the test releases it.
      const held = { release: () => res.writeHead(200).end(good), aborted: false }
      res.on('close', () => { held.aborted = !res.writableFinished })
      slow.push(held)
      return
    }
    const body = files[/** @type {keyof typeof files} */ (path)]
    if (body) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body)
    else res.writeHead(404).end()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  Object.assign(globalThis, { location: new URL(`http://127.0.0.1:${/** @type {any} */ (server.address()).port}/shop`) })
})
after(() => {
  server.close()
  delete (/** @type {any} */ (globalThis)).location
})

/**
 * A loader over stand-ins. `peers` maps a peer id to what it sends for any
 * request: bytes, an Error to fail with, `never` (its channel never opens),
 * `silent` (its channel opens, its reply never comes), `{ trickle: ms }`
 * (good.png's bytes, a frame every 10 ms for `ms`), `{ opensAfter: ms }`
 * (its channel opens that late, then it sends good.png; with `answersAfter: ms`, that long after
 * it is asked) or `{ pause: ms }`
 * (one frame of good.png, nothing for `ms`, then the rest). `signaling` replaces the
 * stand-in coordinator connection (then `holders` is unused). The hedge
 * deadline is a minute unless `hedgeMs` says otherwise (`latency`: one
 * deadline for every request), or `hedge` gives the rule's settings. With
 * `stream`, the origin's answer is passed on as it begins once it is the
 * only source, as the worker does (`streamed`), else not (as in a page).
 * @param {{ peers?: Record<string, Uint8Array | Error | 'never' | 'silent' | { trickle: number } | { opensAfter: number, answersAfter?: number } | { pause: number }>, holders?: string[] | 'timeout', cached?: Record<string, Uint8Array>, signaling?: Signaling, lookupTimeoutMs?: number, connectTimeoutMs?: number, hedgeMs?: number, hedge?: import('../../policy/hedge-rule.js').HedgeSettings, reach?: Reach, stream?: boolean, verifiedLater?: boolean }} [o]
 */
function setup (o = {}) {
  hits = {}
  slow = []
  trickled = []
  /** @type {Response[]} origin answers passed on as they began */
  const streamed = []
  const stored = new Map(Object.entries(o.cached ?? {}).map(([h, bytes]) => [h, { bytes, type: 'image/png' }]))
  const cache = {
    stored,
    get: async (/** @type {string} */ h) => stored.get(h) ?? null,
    put: async (/** @type {string} */ h, /** @type {Uint8Array} */ bytes, /** @type {string} */ type) => { stored.set(h, { bytes, type }); return true }
  }
  const asked = []
  /** @type {any[]} what the loader sent without awaiting a reply (reports) */
  const sent = []
  const signaling = o.signaling ?? {
    id: 'me',
    joined: true,
    send: (/** @type {object} */ message) => { sent.push(message); return true },
    request: async (/** @type {{ hashes: string[] }} */ m) => {
      if (o.holders === 'timeout') throw Object.assign(new Error('timeout'), { code: 'MGH_ERR_REQUEST_TIMEOUT' })
      return { type: 'holders', found: Object.fromEntries(m.hashes.map((h) => [h, o.holders ?? Object.keys(o.peers ?? {})])) }
    }
  }
  /** @type {string[]} peers the loader dropped */
  const dropped = []
  /** @type {string[]} peers whose request was called off (the origin won) */
  const cancelled = []
  /** requests the holders have in hand at once: now, and the most */
  const inFlight = { now: 0, max: 0 }
  const pool = {
    connected: () => [],
    reaching: () => false,
    reachingSince: () => undefined,
    /** @type {number | null} the page's channels' opening pace, as PeerPool keeps it */
    openPace: null,
    prepare: async () => [],
    bind: () => {},
    routeOf: () => signaling,
    drop: (/** @type {string} */ peer) => { dropped.push(peer) },
    transfer: async (/** @type {string} */ peer) => {
      // `never`: a channel that neither opens nor fails
      if (/** @type {any} */ (o.peers)?.[peer] === 'never') await new Promise(() => {})
      const opensAfter = /** @type {any} */ (o.peers)?.[peer]?.opensAfter
      if (opensAfter) await new Promise((resolve) => setTimeout(resolve, opensAfter))
      pool.openPace ??= opensAfter ?? 1
      /** @param {string} hash @param {number} max @param {{ signal: AbortSignal, onBytes: () => void }} how */
      async function answer (hash, max, how) {
        const r = /** @type {any} */ (o.peers)?.[peer]
        const calledOff = new Promise((resolve, reject) => how.signal.addEventListener('abort', () => {
          cancelled.push(peer)
          reject(how.signal.reason)
        }))
        calledOff.catch(() => {})
        if (r === 'silent') await calledOff
        if (r?.trickle) {
          for (let t = 0; t < r.trickle; t += 10) {
            await Promise.race([new Promise((resolve) => setTimeout(resolve, 10)), calledOff])
            how.onBytes()
          }
          return { bytes: new Uint8Array(good), type: 'image/png' }
        }
        if (r?.pause) {
          await Promise.race([new Promise((resolve) => setTimeout(resolve, 10)), calledOff])
          how.onBytes()
          await Promise.race([new Promise((resolve) => setTimeout(resolve, r.pause)), calledOff])
          how.onBytes()
          return { bytes: new Uint8Array(good), type: 'image/png' }
        }
        if (r?.answersAfter) await Promise.race([new Promise((resolve) => setTimeout(resolve, r.answersAfter)), calledOff])
        if (r?.opensAfter) return { bytes: new Uint8Array(good), type: 'image/png' }
        // a turn in flight, as over a channel: a drop meanwhile fails the request, as closing the channel would
        await new Promise((resolve) => setImmediate(resolve))
        if (dropped.includes(peer)) throw Object.assign(new Error('dropped'), { code: 'MGH_ERR_CHANNEL_CLOSED' })
        if (r instanceof Error) throw r
        how.onBytes() // its bytes arrive, as over a channel
        return { bytes: new Uint8Array(r), type: 'image/png' }
      }
      return {
        request: async (/** @type {string} */ hash, /** @type {number} */ max, /** @type {{ signal: AbortSignal, onBytes: () => void }} */ how) => {
          asked.push(peer)
          inFlight.now++
          inFlight.max = Math.max(inFlight.max, inFlight.now)
          try {
            return await answer(hash, max, how)
          } finally {
            inFlight.now--
          }
        }
      }
    }
  }
  const stats = new Stats()
  const events = []
  for (const type of ['load', 'reject', 'error']) stats.on(type, (/** @type {any} */ e) => events.push({ type, ...e }))
  const peers = new PeerFetch({
    stats,
    signaling: /** @type {any} */ (signaling),
    pool: /** @type {any} */ (pool),
    ready: Promise.resolve(true),
    config: { lookupTimeoutMs: o.lookupTimeoutMs ?? 100, connectTimeoutMs: o.connectTimeoutMs ?? 5000, quotaMb: 50 },
    reach: o.reach,
    verifiedLater: o.verifiedLater
  })
  const clock = new OriginClock(o.hedge ?? { hedge: 'latency', hedgeMinMs: o.hedgeMs ?? 60000, hedgeMaxMs: o.hedgeMs ?? 60000 })
  const core = new Loader({ names: new Names('/maygh-manifest.json'), cache: /** @type {any} */ (cache), cacheReady: Promise.resolve(), clock })
  /** @type {import('../src/loader.js').Via} */
  const via = { stats, peers: (url, name, how) => peers.get(url, name, how), ...(o.stream && { stream: (/** @type {Response} */ res) => { streamed.push(res) } }) }
  const loader = {
    load: (/** @type {string} */ url, /** @type {import('../../policy/hedge-rule.js').Priority | (() => import('../../policy/hedge-rule.js').Priority) | undefined} */ priority = undefined) =>
      core.load(url, priority ? { ...via, priority: typeof priority === 'function' ? priority : () => priority } : via),
    settled: () => core.settled(),
    active: core.active
  }
  return { loader, peers, pool, cache, stats, events, asked, sent, dropped, cancelled, clock, inFlight, streamed }
}

const bytesOf = async (/** @type {Blob} */ blob) => Buffer.from(await blob.arrayBuffer())
/** @param {() => boolean} ok resolves once it holds (checked every 5 ms) */
const until = async (ok) => { while (!ok()) await new Promise((resolve) => setTimeout(resolve, 5)) }

test('a peer\'s verified bytes are used and stored; the origin is not asked', async () => {
  const { loader, cache, stats } = setup({ peers: { p1: good } })
  const blob = await loader.load('/good.png')
  assert.deepEqual(await bytesOf(blob), good)
  assert.equal(blob.type, 'image/png')
  assert.equal(hits['/good.png'], undefined)
  assert.ok(cache.stored.has(manifest.assets['/good.png'].hash))
  assert.deepEqual(stats.counts.peer, { bytes: good.length, count: 1 })
})

test('where the caller verifies (transparent mode: the worker), peer bytes are handed over as they came; a mismatch it says of counts one rejection, reports the peer and asks it nothing more', async () => {
  const tampered = Buffer.from(good)
  tampered[100] ^= 1
  const s = setup({ peers: { bad: tampered, fine: good }, verifiedLater: true })
  const hash = manifest.assets['/good.png'].hash
  const got = await s.peers.get('/good.png', { hash }, { signal: new AbortController().signal, onBytes: () => {}, deadline: () => 60000, priority: () => 'viewport', originMs: () => null, race: () => {} })
  assert.deepEqual(Buffer.from(/** @type {any} */ (got).bytes), tampered, 'not verified on the page')
  assert.equal(got?.peer, 'bad')
  assert.equal(s.stats.counts.rejected, 0)
  s.peers.mismatch('/good.png', hash, 'bad')
  assert.equal(s.stats.counts.rejected, 1)
  assert.deepEqual(s.sent, [{ type: 'report', peer: 'bad', hash, reason: 'hash_mismatch' }])
  assert.ok(s.dropped.includes('bad'), 'its channel dropped')
  await s.peers.get('/good.png', { hash }, { signal: new AbortController().signal, onBytes: () => {}, deadline: () => 60000, priority: () => 'viewport', originMs: () => null, race: () => {} })
  assert.deepEqual(s.asked, ['bad', 'fine'], 'not asked again')
})

test('bytes that fail verification count one rejection; the next holder is tried, then the origin', async () => {
  const tampered = Buffer.from(good)
  tampered[100] ^= 1
  let s = setup({ peers: { bad: tampered, fine: good } })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.stats.counts.rejected, 1)
  assert.deepEqual(s.asked, ['bad', 'fine'])
  assert.equal(s.stats.counts.peer.count, 1)
  // The rejected peer is reported, and not asked again.
  assert.deepEqual(s.sent, [{ type: 'report', peer: 'bad', hash: manifest.assets['/good.png'].hash, reason: 'hash_mismatch' }])
  await s.loader.load('/other.png')
  assert.deepEqual(s.asked, ['bad', 'fine', 'fine'])

  s = setup({ peers: { bad: tampered } })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.stats.counts.rejected, 1)
  assert.equal(hits['/good.png'], 1, 'from the origin after the only holder failed')
  assert.ok(s.events.some((e) => e.type === 'reject' && e.peer === 'bad' && e.url === '/good.png'))
})

test('misses, stalls, channels that never open and lookup timeouts fall back to the origin; the peer\'s faults are reported', async () => {
  const failing = (/** @type {string} */ code) => ({ peers: { p1: Object.assign(new Error(code), { code }) } })
  for (const [o, reason] of /** @type {[Parameters<typeof setup>[0], string | undefined][]} */ ([
    [failing('MGH_ERR_MISS'), 'miss'],
    [failing('MGH_ERR_STALL'), 'stall'],
    [failing('MGH_ERR_CONNECT_TIMEOUT'), 'no_channel'],
    [failing('MGH_ERR_CONNECT_FAILED'), 'no_channel'],
    [failing('MGH_ERR_OFFLINE'), undefined],
    [{ holders: /** @type {'timeout'} */ ('timeout') }, undefined],
    [{ holders: [] }, undefined]
  ])) {
    const s = setup(o)
    assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
    assert.equal(hits['/good.png'], 1)
    assert.equal(s.stats.counts.origin.count, 1)
    // stored once verified, after the page has its bytes
    await s.loader.settled()
    assert.ok(s.cache.stored.has(manifest.assets['/good.png'].hash), 'verified origin bytes are stored')
    assert.deepEqual(s.sent, reason === undefined ? [] : [{ type: 'report', peer: 'p1', hash: manifest.assets['/good.png'].hash, reason }], String(reason))
    if (reason === undefined || o?.peers === undefined) continue
    // A peer that only lacked one asset is asked for the next; one that failed otherwise is not.
    await s.loader.load('/other.png')
    assert.equal(s.asked.length, reason === 'miss' ? 2 : 1, reason)
    assert.equal(s.sent.length, 1, `${reason}: one report per peer and page`)
  }
})

test('loads started together skip a holder another one has found bad, and report it once', async () => {
  const tampered = Buffer.from(good)
  tampered[100] ^= 1
  const s = setup({ peers: { bad: tampered, fine: good } })
  // (This stand-in pool answers every request of a peer with the same bytes: good.png's from `fine`.)
  const loads = [s.loader.load('/good.png'), s.loader.load('/other.png')]
  await Promise.all(loads.map((p) => p.catch(() => {})))
  assert.equal(s.dropped.filter((p) => p === 'bad').length, 1, 'the bad peer\'s connection is closed at its first bad bytes')
  assert.equal(s.sent.filter((m) => m.peer === 'bad').length, 1, 'and it is reported once')
})

test('stale manifest: origin bytes that do not match are used but neither stored nor counted as peer-safe', async () => {
  const s = setup({ holders: [] })
  assert.deepEqual(await bytesOf(await s.loader.load('/stale.png')), stale)
  await s.loader.settled()
  assert.equal(s.cache.stored.size, 0)
  assert.ok(s.events.some((e) => e.type === 'error' && e.code === 'MGH_ERR_HASH_MISMATCH'))
})

test('the cache answers first; unnamed URLs go to the origin unverified and uncached', async () => {
  const s = setup({ cached: { [manifest.assets['/good.png'].hash]: good } })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.stats.counts.cache.count, 1)
  assert.equal(hits['/good.png'], undefined)

  assert.equal(await (await s.loader.load('/unnamed.txt')).text(), 'hello')
  assert.equal(s.cache.stored.size, 1)
  assert.equal(s.stats.counts.origin.count, 1)
})

test('concurrent loads of the same content fetch it once; an origin 404 rejects with MGH_ERR_ORIGIN', async () => {
  const s = setup({ holders: [] })
  const blobs = await Promise.all([s.loader.load('/good.png'), s.loader.load('/good.png'), s.loader.load('good.png')])
  assert.equal(blobs.length, 3)
  assert.equal(hits['/good.png'], 1)
  await assert.rejects(s.loader.load('/missing.png'), { code: 'MGH_ERR_ORIGIN' })
  assert.equal(s.stats.counts.failed, 1)
  await s.loader.settled()
  assert.equal(s.loader.active.size, 0)
})

test('a load of the same content that comes while the first one\'s bytes are being stored shares them: the holder is not asked twice', async () => {
  const s = setup({ peers: { p1: good } })
  // The store takes its time, as IndexedDB can under load.
  /** @type {() => void} */
  let release = () => {}
  const put = s.cache.put
  s.cache.put = async (h, bytes, type) => { await new Promise((resolve) => { release = () => resolve(undefined) }); return put(h, bytes, type) }
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.cache.stored.size, 0)
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.deepEqual(s.asked, ['p1'])
  release()
  await s.loader.settled()
  assert.ok(s.cache.stored.has(manifest.assets['/good.png'].hash))
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.deepEqual(s.asked, ['p1'])
  assert.deepEqual(s.stats.counts.peer, { bytes: good.length, count: 1 })
})

/**
 * A real coordinator connection over FakeWebSocket, joined to coordinator A
 * (of A and B); reconnects after ~1 ms, awaited as events, not waited out.
 * @param {import('node:test').TestContext} t
 */
async function joined (t) {
  const real = globalThis.WebSocket
  globalThis.WebSocket = /** @type {any} */ (FakeWebSocket)
  FakeWebSocket.made = []
  const signaling = new Signaling({ urls: ['ws://a.example', 'ws://b.example'], backoffBaseMs: 1, backoffMaxMs: 1, getHave: () => [], random: () => 0 })
  t.after(() => {
    signaling.stop()
    globalThis.WebSocket = real
  })
  signaling.start()
  await welcome(signaling, FakeWebSocket.last)
  return signaling
}

/**
 * Play a coordinator that accepts `ws` and welcomes the client.
 * @param {Signaling} signaling
 * @param {FakeWebSocket} ws
 */
function welcome (signaling, ws) {
  const welcomed = new Promise((resolve) => signaling.on('welcome', resolve))
  ws.open()
  ws.receive({ type: 'welcome', ref: ws.sent[0].ref, id: 'x~AAAAAAAAAAAAAAAAAAAAAA', iceServers: [], holding: 0, limits: {} })
  return welcomed
}

// A minute to answer: these loads can only finish in time if nothing waits out the lookup's timeout.
const PATIENT = 60000

test('a lookup cut off by its coordinator\'s death is asked again of the next one joined; its holder serves the bytes', { timeout: 10000 }, async (t) => {
  const signaling = await joined(t)
  const s = setup({ peers: { 'x~PPPPPPPPPPPPPPPPPPPPPP': good }, signaling, lookupTimeoutMs: PATIENT })
  const a = FakeWebSocket.last
  const load = s.loader.load('/good.png')
  const lookup = await a.nextSent()
  assert.equal(lookup.type, 'lookup')
  const next = FakeWebSocket.next()
  a.end(1006)
  const b = await next
  assert.equal(b.url, 'ws://b.example')
  await welcome(signaling, b)
  const again = b.sent[1]
  assert.deepEqual([again.type, again.hashes], ['lookup', lookup.hashes])
  b.receive({ type: 'holders', found: { [again.hashes[0]]: ['x~PPPPPPPPPPPPPPPPPPPPPP'] }, ref: again.ref })
  assert.deepEqual(await bytesOf(await load), good)
  assert.deepEqual(s.asked, ['x~PPPPPPPPPPPPPPPPPPPPPP'])
  assert.equal(hits['/good.png'], undefined, 'the origin is not asked')
})

test('a lookup the coordinator may have dropped over its rate limit goes to the origin at once', { timeout: 10000 }, async (t) => {
  const signaling = await joined(t)
  const s = setup({ peers: { 'x~PPPPPPPPPPPPPPPPPPPPPP': good }, signaling, lookupTimeoutMs: PATIENT })
  const a = FakeWebSocket.last
  const load = s.loader.load('/good.png')
  assert.equal((await a.nextSent()).type, 'lookup')
  a.receive({ type: 'error', code: 'MGH_ERR_RATE_LIMITED', message: 'too many messages' })
  assert.deepEqual(await bytesOf(await load), good)
  assert.equal(hits['/good.png'], 1)
  assert.deepEqual(s.asked, [])
  assert.equal(signaling.waiting.size, 0)
})

test('loads spread over the holders they are handed; a holder whose channel is not open within a fifth of connectTimeoutMs is reported and passed over', async () => {
  // This stand-in's `never` peer never connects nor fails: without the pass-over the load would wait for ever.
  const t = setup({ peers: { never: 'never', fine: good }, connectTimeoutMs: 500 })
  assert.deepEqual(await bytesOf(await t.loader.load('/good.png')), good)
  assert.deepEqual(t.asked, ['fine'])
  assert.equal(t.stats.counts.peer.count, 1)
  assert.deepEqual(t.sent.map((m) => [m.peer, m.reason]), [['never', 'no_channel']], 'reported, as a channel that did not open')
  assert.deepEqual(t.dropped, ['never'])
  // Three loads of three assets start at the first, second and third holder.
  const u = setup({ peers: { a: good, b: good, c: good } })
  for (const url of ['/good.png', '/other.png', '/stale.png']) await u.loader.load(url).catch(() => {})
  assert.deepEqual(u.asked.filter((p, i, all) => all.indexOf(p) === i), ['a', 'b', 'c'])
})

test('hedging: when the origin wins while a holder\'s channel is still opening, the holder is asked nothing once it opens', { timeout: 10000 }, async () => {
  const s = setup({ peers: { late: { opensAfter: 150 } }, hedgeMs: 20 })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.stats.counts.origin.count, 1)
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.deepEqual(s.asked, [], 'no request reached the holder: its upload would have been thrown away')
})

test('hedging: once its holder is handed the request, the holder\'s answer gets the whole deadline (the origin is not asked while it is on its way)', { timeout: 10000 }, async () => {
  // The channel opens at 80 ms and the answer takes 100 ms more: past the 120-ms deadline counted from
  // the request, within the one counted from the ask.
  const s = setup({ peers: { slow: { opensAfter: 80, answersAfter: 100 } }, hedgeMs: 120 })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(s.stats.counts.peer.count, 1)
  assert.equal(hits['/good.png'], undefined, 'the origin was never asked')
  // A channel that opens after the deadline: the origin is asked at the deadline (and wins here).
  const late = setup({ peers: { late: { opensAfter: 200 } }, hedgeMs: 120 })
  assert.deepEqual(await bytesOf(await late.loader.load('/good.png')), good)
  assert.equal(late.stats.counts.origin.count, 1)
})

test('hedging, balanced: an image its page places in view after counting it below the fold gets the viewport\'s deadline from then', { timeout: 10000 }, async () => {
  const hedge = /** @type {const} */ ({ hedge: 'balanced', hedgeMinMs: 100, hedgeMaxMs: 3000 })
  const s = setup({ peers: { late: { opensAfter: 220 } }, hedge })
  s.clock.observe(5) // a nearby origin: the viewport's deadline is the 100-ms floor
  const t0 = performance.now()
  // Below the fold until 150 ms, then in view: the origin not before 250 ms, and the channel opens at 220.
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png', () => performance.now() - t0 < 150 ? 'later' : 'viewport')), good)
  assert.equal(s.stats.counts.peer.count, 1)
  assert.equal(hits['/good.png'], undefined, 'the origin was never asked')
})

test('hedging, balanced: placed in view late, an image keeps the deadline it had when that ends sooner than the viewport\'s from then', { timeout: 10000 }, async () => {
  // Below the fold, the deadline is 1 s; in view, 0.8 s. Placed in view at 0.9 s, its holder silent: the
  // origin at 1 s (the deadline it had), not at 1.7 s (the viewport's counted from the placement).
  const hedge = /** @type {const} */ ({ hedge: 'balanced', hedgeMinMs: 800, hedgeMaxMs: 1000 })
  const s = setup({ peers: { mute: 'silent' }, hedge })
  s.clock.observe(5)
  const t0 = performance.now()
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png', () => performance.now() - t0 < 900 ? 'later' : 'viewport')), good)
  const ms = performance.now() - t0
  assert.equal(s.stats.counts.origin.count, 1)
  assert.ok(ms >= 950 && ms < 1500, `the origin won at ${Math.round(ms)} ms: more urgent never means the origin later`)
})

test('a visitor whose channels have not been opening races the origin at once, and still tries its holder; not where the site prefers savings', { timeout: 10000 }, async () => {
  const unreached = () => {
    const reach = new Reach(undefined)
    for (let i = 0; i < UNREACHED_AFTER; i++) reach.miss()
    return reach
  }
  // The holder's channel opens at 300 ms: with a 2-s deadline the origin would wait for it.
  const s = setup({ peers: { late: { opensAfter: 300 } }, hedgeMs: 2000, reach: unreached() })
  /** @type {unknown[]} */
  const loads = []
  s.stats.on('load', (/** @type {any} */ e) => loads.push([e.source, e.asked]))
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.deepEqual(loads, [['origin', 'race']], 'the origin at once, not after the deadline')
  // Not yet that many misses: the holder's answer wins.
  const reach = new Reach(undefined)
  reach.miss()
  const fine = setup({ peers: { late: { opensAfter: 300 } }, hedgeMs: 2000, reach })
  assert.deepEqual(await bytesOf(await fine.loader.load('/good.png')), good)
  assert.equal(fine.stats.counts.peer.count, 1)
  // Savings first: peers until they give up, however unreached.
  const savings = setup({ peers: { late: { opensAfter: 300 } }, hedge: { hedge: 'savings', hedgeMinMs: 100, hedgeMaxMs: 1500 }, reach: unreached() })
  assert.deepEqual(await bytesOf(await savings.loader.load('/good.png')), good)
  assert.equal(savings.stats.counts.peer.count, 1)
})

test('hedging, balanced: a holder the page\'s pace says would lose the race is not asked; the origin is, at once', { timeout: 10000 }, async () => {
  const hedge = /** @type {const} */ ({ hedge: 'balanced', hedgeMinMs: 1000, hedgeMaxMs: 3000 })
  // A nearby origin (its whole answer in 5 ms): the viewport's deadline is the 1-s floor. This page's
  // holders take 1.5 s to answer: the origin asked at the deadline would win, so it is asked now.
  const near = setup({ peers: { fine: good }, hedge })
  near.clock.observe(5)
  near.peers.answerPace = 1500
  const t0 = performance.now()
  assert.deepEqual(await bytesOf(await near.loader.load('/good.png')), good)
  assert.ok(performance.now() - t0 < 1000, 'the origin was asked before the deadline')
  assert.deepEqual(near.asked, [], 'the holder uploaded nothing to be thrown away')
  assert.equal(near.stats.counts.origin.count, 1)
  // The same holders against a distant origin (1 s to first byte, asked at 2 s): the holder is asked, and wins.
  const far = setup({ peers: { fine: good }, hedge })
  far.clock.observe(1000)
  far.peers.answerPace = 1500
  assert.deepEqual(await bytesOf(await far.loader.load('/good.png')), good)
  assert.deepEqual(far.asked, ['fine'])
  assert.equal(far.stats.counts.peer.count, 1)
  // Under savings first nobody is outrun.
  const savings = setup({ peers: { fine: good }, hedge: { ...hedge, hedge: 'savings' } })
  savings.clock.observe(5)
  savings.peers.answerPace = 1500
  assert.deepEqual(await bytesOf(await savings.loader.load('/good.png')), good)
  assert.equal(savings.stats.counts.peer.count, 1)
})

test('hedging: a silent holder costs the hedge deadline, not the stall timeout; the origin wins and the peer request is called off', { timeout: 10000 }, async () => {
  const s = setup({ peers: { quiet: 'silent' }, hedgeMs: 50 })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(hits['/good.png'], 1)
  assert.equal(s.stats.counts.origin.count, 1)
  assert.deepEqual(s.cancelled, ['quiet'], 'the losing peer request was cancelled')
  await s.loader.settled()
  assert.ok(s.cache.stored.has(manifest.assets['/good.png'].hash))
})

test('an origin asked because peers gave up (nobody holds the asset) is its only source: its answer is passed on before its last byte, and all its bytes are still checked and stored', { timeout: 10000 }, async () => {
  const s = setup({ holders: [], stream: true })
  const load = s.loader.load('/trickled.png')
  await until(() => s.streamed.length === 1)
  const reader = /** @type {ReadableStream<Uint8Array>} */ (s.streamed[0].body).getReader()
  const first = await reader.read()
  assert.deepEqual(Buffer.from(/** @type {Uint8Array} */ (first.value)), good.subarray(0, 1000), 'the first KB, while the origin holds the rest')
  assert.equal(s.streamed[0].headers.get('content-length'), String(good.length))
  trickled[0].release()
  /** @type {Uint8Array[]} */
  const rest = []
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value)
  assert.deepEqual(Buffer.concat([first.value, ...rest].map((b) => Buffer.from(/** @type {Uint8Array} */ (b)))), good)
  assert.deepEqual(await bytesOf(await load), good)
  assert.equal(s.stats.counts.origin.count, 1)
  await s.loader.settled()
  assert.ok(s.cache.stored.has(manifest.assets['/good.png'].hash), 'verified and stored')
})

test('an origin that answers while peers are still at it, quiet or not, is not passed on as it comes: the first complete copy wins', { timeout: 10000 }, async () => {
  const reach = new Reach(undefined)
  for (let i = 0; i < UNREACHED_AFTER; i++) reach.miss()
  // Unreached: the origin is asked at once (race) and begins to answer at once, while the peer's
  // frames come every 10 ms until 200 ms; the origin's last byte would come at 400 ms.
  const s = setup({ peers: { steady: { trickle: 200 } }, hedgeMs: 1000, stream: true, reach })
  const load = s.loader.load('/trickled.png')
  setTimeout(() => trickled[0]?.release(), 400)
  assert.deepEqual(await bytesOf(await load), good)
  assert.equal(s.stats.counts.peer.count, 1, 'the peer won')
  assert.equal(s.streamed.length, 0)
  // A silent holder past the deadline: the origin's answer begins while it is still asked, and
  // wins once whole.
  const quiet = setup({ peers: { quiet: 'silent' }, hedgeMs: 50, stream: true })
  const slowly = quiet.loader.load('/trickled.png')
  await until(() => trickled.length === 1)
  setTimeout(() => trickled[0].release(), 50)
  assert.deepEqual(await bytesOf(await slowly), good)
  assert.equal(quiet.stats.counts.origin.count, 1)
  assert.equal(quiet.streamed.length, 0)
  assert.deepEqual(quiet.cancelled, ['quiet'])
})

test('hedging: a holder quiet for the deadline is passed over for the next, which wins over the slow origin; it is asked last from then on, and not reported', { timeout: 10000 }, async () => {
  const s = setup({ peers: { quiet: 'silent', fine: good }, hedgeMs: 50 })
  assert.deepEqual(await bytesOf(await s.loader.load('/slow.png')), good)
  assert.equal(s.stats.counts.peer.count, 1)
  assert.deepEqual(s.asked, ['quiet', 'fine'])
  assert.deepEqual(s.cancelled, ['quiet'], 'the quiet holder\'s request was called off')
  // The origin is asked at the same deadline; the next holder's bytes may win before its request is even read.
  // Any origin request that got there is aborted (the test's timeout bounds the wait).
  while (!slow.every((asked) => asked.aborted)) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.deepEqual(s.sent, [], 'quiet is not a fault: nothing reported')
  s.asked.length = 0
  const name = { hash: manifest.assets['/good.png'].hash, size: good.length }
  // Two more requests, one of which would start its turn at the quiet holder.
  for (let i = 0; i < 2; i++) {
    const got = await s.peers.get('/good.png', name, { signal: new AbortController().signal, onBytes () {}, deadline: () => 50, priority: () => 'viewport', originMs: () => null, race () {} })
    assert.equal(got?.peer, 'fine')
  }
  assert.deepEqual(s.asked, ['fine', 'fine'], 'the quiet holder is asked after the others')
})

test('a holder far slower than the page\'s others (a channel that never opens, or one that never answers) is passed over well before the connect pass-over and the hedge deadline, and not dropped', { timeout: 20000 }, async () => {
  for (const liar of /** @type {const} */ (['never', 'silent'])) {
    // The hedge deadline 5 s, the connect pass-over 4 s (a fifth of connectTimeoutMs).
    const s = setup({ peers: { liar, fine: good }, connectTimeoutMs: 20000 })
    const name = { hash: manifest.assets['/good.png'].hash, size: good.length }
    const how = () => ({ signal: new AbortController().signal, onBytes () {}, deadline: () => 5000, priority: () => /** @type {const} */ ('viewport'), originMs: () => null, race () {} })
    // Two requests at once: the first starts its turn at the liar, the second at the honest holder, whose pace the page learns.
    const t0 = performance.now()
    const got = await Promise.all([s.peers.get('/good.png', name, how()), s.peers.get('/good.png', name, how())])
    const ms = performance.now() - t0
    assert.deepEqual(got.map((g) => g?.peer), ['fine', 'fine'], liar)
    assert.ok(ms < 2000, `${liar}: passed over after ${Math.round(ms)} ms`)
    assert.ok(s.peers.quiet.has('liar'), `${liar}: asked last from then on`)
    assert.ok(!s.peers.banned.has('liar'), `${liar}: not dropped`)
    // A channel that did not open is reported (counted; it quarantines nobody); quiet is not a fault.
    assert.deepEqual(s.sent.map((m) => /** @type {any} */ (m).reason), liar === 'never' ? ['no_channel'] : [], liar)
    if (liar === 'silent') assert.deepEqual(s.cancelled, ['liar'], 'its request was called off')
  }
})

test('a request waiting for a holder\'s channel to open goes to another holder\'s open channel as soon as a slot there frees, without waiting out the pass-over or blaming the first', { timeout: 10000 }, async () => {
  const s = setup({ peers: { liar: 'never', fine: good }, connectTimeoutMs: 20000 })
  // The honest holder's channel is open; the liar's never opens.
  s.pool.connected = () => /** @type {any} */ (['fine'])
  const name = { hash: manifest.assets['/good.png'].hash, size: good.length }
  const how = () => ({ signal: new AbortController().signal, onBytes () {}, deadline: () => 5000, priority: () => /** @type {const} */ ('viewport'), originMs: () => null, race () {} })
  // The first starts its turn at the liar, the second at the honest holder, which then frees its slot.
  const got = await Promise.all([s.peers.get('/good.png', name, how()), s.peers.get('/good.png', name, how())])
  assert.deepEqual(got.map((g) => g?.peer), ['fine', 'fine'])
  assert.deepEqual(s.sent, [], 'the liar not reported: the request moved on before its pass-over')
  assert.ok(!s.peers.quiet.has('liar') && !s.peers.banned.has('liar'), 'nor set aside: it may yet open')
})

test('the last holder left is not passed over for being slower than the page\'s others', { timeout: 10000 }, async () => {
  const s = setup({ peers: { late: { opensAfter: 400 } }, connectTimeoutMs: 20000 })
  s.pool.openPace = 10
  s.peers.answerPace = 10
  const name = { hash: manifest.assets['/good.png'].hash, size: good.length }
  const got = await s.peers.get('/good.png', name, { signal: new AbortController().signal, onBytes () {}, deadline: () => 5000, priority: () => 'viewport', originMs: () => null, race () {} })
  assert.equal(got?.peer, 'late')
})

test('hedging: while peer bytes keep flowing the origin is not asked, though the transfer outlasts the deadline', { timeout: 10000 }, async () => {
  const s = setup({ peers: { steady: { trickle: 300 } }, hedgeMs: 60 })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(hits['/good.png'], undefined, 'never asked the origin')
  assert.equal(s.stats.counts.peer.count, 1)
})

test('hedging: a peer that wins while the origin is still answering has the origin fetch aborted', { timeout: 10000 }, async () => {
  const s = setup({ peers: { late: { trickle: 200 } }, hedgeMs: 0 })
  const load = s.loader.load('/slow.png')
  // Deadline 0: the origin is asked at once, and holds its answer; the peer finishes first.
  assert.deepEqual(await bytesOf(await load), good)
  assert.equal(s.stats.counts.peer.count, 1)
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(slow.length, 1, 'the origin was asked')
  assert.equal(slow[0].aborted, true, 'and its request was aborted when the peer won')
})

test('hedging, balanced: an image below the fold waits for a channel that opens late, a render-blocking request races it', { timeout: 10000 }, async () => {
  const hedge = /** @type {const} */ ({ hedge: 'balanced', hedgeMinMs: 20, hedgeMaxMs: 3000 })
  const later = setup({ peers: { late: { opensAfter: 300 } }, hedge })
  later.clock.observe(5) // a nearby origin: the race point is the 20-ms floor
  assert.deepEqual(await bytesOf(await later.loader.load('/good.png', 'later')), good)
  assert.equal(later.stats.counts.peer.count, 1)
  assert.equal(hits['/good.png'], undefined, 'the origin was never asked')
  const blocking = setup({ peers: { late: { opensAfter: 300 } }, hedge })
  blocking.clock.observe(5)
  assert.deepEqual(await bytesOf(await blocking.loader.load('/good.png', 'blocking')), good)
  assert.equal(blocking.stats.counts.origin.count, 1, 'the origin won the race')
  assert.equal(hits['/good.png'], 1)
})

test('a page\'s requests take a window of bytes per holder at a time, and those below the fold wait while the viewport\'s are on their way, however late they came', { timeout: 10000 }, async () => {
  const s = setup({ peers: { steady: { trickle: 40 } } })
  const name = { hash: manifest.assets['/good.png'].hash, size: good.length }
  /** @type {string[]} */
  const done = []
  const get = (/** @type {string} */ label, /** @type {import('../../policy/hedge-rule.js').Priority} */ priority) =>
    s.peers.get('/good.png', name, { signal: new AbortController().signal, onBytes () {}, deadline: () => 60000, priority: () => priority, originMs: () => null, race () {} }).then((a) => {
      assert.equal(a?.peer, 'steady')
      done.push(label)
    })
  // six below the fold first, then three in the viewport, all at once
  const labels = ['l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'v1', 'v2', 'v3']
  await Promise.all(labels.map((label) => get(label, label[0] === 'v' ? 'viewport' : 'later')))
  assert.equal(s.inFlight.max, Math.min(SLOTS_PER_PEER, Math.ceil(WINDOW_BYTES / good.length)), 'no more on one holder than its window of bytes takes')
  // They run at once, three at a time: which of each three ends first is the machine's business.
  assert.deepEqual(done.slice(0, 3).sort(), ['v1', 'v2', 'v3'], 'the viewport\'s first, though asked for after six below the fold and with slots free')
  assert.deepEqual(done.slice(3).sort(), ['l1', 'l2', 'l3', 'l4', 'l5', 'l6'])
})

test('a small request waits for the channel that will be free first, not behind a large reply on another', { timeout: 10000 }, async () => {
  // Two holders each sending a large reply, `fast` done long before `slow`: the small request
  // made next is asked of `fast` as its reply ends, not queued behind `slow`'s.
  const s = setup({ peers: { slow: { trickle: 400 }, fast: { trickle: 60 } } })
  const hash = manifest.assets['/good.png'].hash
  /** @type {string[]} */
  const done = []
  const get = (/** @type {string} */ label, /** @type {number} */ size) =>
    s.peers.get('/good.png', { hash, size }, { signal: new AbortController().signal, onBytes () {}, deadline: () => 60000, priority: () => 'viewport', originMs: () => null, race () {} }).then((a) => {
      done.push(`${label}:${a?.peer}`)
    })
  const large1 = get('large1', 300_000)
  const large2 = get('large2', 300_000)
  await new Promise((resolve) => setTimeout(resolve, 20))
  await Promise.all([large1, large2, get('small', good.length)])
  assert.deepEqual(done, ['large2:fast', 'small:fast', 'large1:slow'])
})

test('hedging, savings first: the origin waits for peers past any deadline', { timeout: 10000 }, async () => {
  const s = setup({ peers: { late: { opensAfter: 200 } }, hedge: { hedge: 'savings', hedgeMinMs: 0, hedgeMaxMs: 20 } })
  s.clock.observe(1)
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png', 'blocking')), good)
  assert.equal(s.stats.counts.peer.count, 1)
  assert.equal(hits['/good.png'], undefined)
})

test('hedging: a holder that has sent bytes and goes quiet is not passed over (its bytes would be thrown away); it finishes while the origin is asked', { timeout: 10000 }, async () => {
  const s = setup({ peers: { pausing: { pause: 200 }, next: good }, hedgeMs: 50 })
  assert.deepEqual(await bytesOf(await s.loader.load('/slow.png')), good)
  assert.equal(s.stats.counts.peer.count, 1)
  assert.deepEqual(s.asked, ['pausing'], 'the next holder was not asked')
  assert.equal(s.events.find((e) => e.type === 'load')?.peer, 'pausing')
  while (!slow.every((asked) => asked.aborted)) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.equal(slow.length, 1, 'the origin was asked meanwhile, and called off when the peer won')
})

test('the origin clock (latency first): twice the smoothed time to first byte, within the bounds; the upper bound before anything is seen', () => {
  const clock = new OriginClock({ hedge: 'latency', hedgeMinMs: 100, hedgeMaxMs: 1500 })
  assert.equal(clock.deadline(), 1500)
  clock.observe(80)
  assert.equal(clock.deadline(), 160)
  clock.observe(NaN)
  assert.equal(clock.deadline(), 160, 'an unknown figure changes nothing')
  clock.observe(5000)
  assert.equal(clock.deadline(), 1500)
  const fast = new OriginClock({ hedge: 'latency', hedgeMinMs: 100, hedgeMaxMs: 1500 })
  fast.observe(3)
  assert.equal(fast.deadline(), 100)
})

test('every coordinator refusing the connection costs no waiting: loads go to the origin at once', { timeout: 10000 }, async (t) => {
  const real = globalThis.WebSocket
  globalThis.WebSocket = /** @type {any} */ (FakeWebSocket)
  FakeWebSocket.made = []
  const signaling = new Signaling({ urls: ['ws://a.example'], backoffBaseMs: PATIENT, backoffMaxMs: PATIENT, getHave: () => [], random: () => 0 })
  t.after(() => {
    signaling.stop()
    globalThis.WebSocket = real
  })
  signaling.start()
  FakeWebSocket.last.end(1006) // refused
  assert.equal(signaling.unreachable(), true)
  // The join timeout and the lookup timeout are a minute: only not waiting at all finishes in time.
  const s = setup({ peers: { p: good }, signaling, lookupTimeoutMs: PATIENT })
  assert.deepEqual(await bytesOf(await s.loader.load('/good.png')), good)
  assert.equal(hits['/good.png'], 1)
  assert.deepEqual(s.asked, [])
})

test('with the ICE servers an earlier page was told, the page\'s first lookup carries offers made before it joined and follows its join at once (afterJoin), not waiting for the welcome', { timeout: 10000 }, async () => {
  /** @type {any[]} */
  const lookups = []
  const signaling = Object.assign(new Emitter(), {
    id: null,
    joined: false,
    joining: null,
    stopped: false,
    ice: { iceServers: [{ urls: 'stun:127.0.0.1:3478' }] },
    unreachable: () => false,
    send: () => true,
    request: async (/** @type {any} */ m, /** @type {number} */ _ms, /** @type {any} */ how) => {
      lookups.push({ m, how, joined: signaling.joined })
      return { type: 'holders', found: Object.fromEntries(m.hashes.map((/** @type {string} */ h) => [h, ['p1']])), offered: { p1: m.offers?.[0]?.cid } }
    }
  })
  /** @type {any[]} */
  const bound = []
  let prepared = 0
  const pool = {
    connected: () => [],
    reaching: () => false,
    prepare: async (/** @type {number} */ n) => { prepared = n; return Array.from({ length: n }, (_, i) => ({ cid: `c${i}`, sdp: { type: 'offer', sdp: 'v=0' } })) },
    bind: (/** @type {any} */ offered) => bound.push(offered)
  }
  const peers = new PeerFetch({ stats: new Stats(), signaling: /** @type {any} */ (signaling), pool: /** @type {any} */ (pool), ready: new Promise(() => {}), config: { lookupTimeoutMs: 1000, connectTimeoutMs: 5000, quotaMb: 50 } })
  const found = peers.holders(manifest.assets['/good.png'].hash)
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(prepared, 3, 'offers made while the page joins')
  assert.equal(lookups.length, 0, 'nothing sent before the join is')
  signaling.joining = /** @type {any} */ ({})
  signaling.emit('joining', null)
  assert.deepEqual(await found, ['p1'])
  assert.equal(lookups.length, 1)
  assert.equal(lookups[0].joined, false, 'sent before the welcome')
  assert.equal(lookups[0].how.afterJoin, true)
  assert.deepEqual(lookups[0].m.offers.map((/** @type {any} */ o) => o.cid), ['c0', 'c1', 'c2'])
  assert.deepEqual(bound, [{ p1: 'c0' }])
})

test('a page its worker controls (transparent mode) makes its offers once the worker expects it to be asked for peer bytes and its socket is up, and sends its first lookup through the worker\'s socket while its own has not joined; its holders are reached that way; once joined, its own', async () => {
  /** @param {string} name */
  const route = (name) => {
    /** @type {any[]} */
    const lookups = []
    return Object.assign(new Emitter(), {
      name,
      lookups,
      id: /** @type {string | null} */ (null),
      joined: false,
      joining: null,
      stopped: false,
      ice: { iceServers: [] },
      unreachable: () => false,
      send: () => true,
      request: async (/** @type {any} */ m) => {
        lookups.push(m)
        return { type: 'holders', found: Object.fromEntries(m.hashes.map((/** @type {string} */ h) => [h, [`${name}-holder`, 'worker~me']])), offered: {} }
      }
    })
  }
  const own = route('own')
  const relay = route('relay')
  /** @type {any[]} */
  const calls = []
  const pool = {
    connected: () => [],
    reaching: () => false,
    prepare: async (/** @type {number} */ n, /** @type {any} */ r) => { calls.push(['prepare', n, r.name]); return [{ cid: 'c0', sdp: { type: 'offer', sdp: 'v=0' } }] },
    bind: (/** @type {any} */ _, /** @type {any} */ r) => calls.push(['bind', r.name]),
    introduce: (/** @type {string[]} */ peers, /** @type {any} */ r) => calls.push(['introduce', peers, r.name])
  }
  const peers = new PeerFetch({ stats: new Stats(), signaling: /** @type {any} */ (own), relay: /** @type {any} */ (relay), pool: /** @type {any} */ (pool), ready: new Promise(() => {}), config: { lookupTimeoutMs: 1000, connectTimeoutMs: 5000, quotaMb: 50 } })
  peers.expect()
  assert.deepEqual(calls, [], 'no ICE servers known yet: no offers')
  relay.id = 'worker~me'
  relay.joined = true
  relay.emit('up', null)
  assert.deepEqual(calls, [['prepare', 3, 'relay']], 'made as the worker\'s socket is up, before any request')
  assert.deepEqual(await peers.holders(manifest.assets['/good.png'].hash), ['relay-holder'], 'never the worker\'s own peer')
  assert.equal(relay.lookups.length, 1)
  assert.deepEqual(relay.lookups[0].offers.map((/** @type {any} */ o) => o.cid), ['c0'])
  assert.equal(own.lookups.length, 0)
  assert.deepEqual(calls.slice(1), [['introduce', ['relay-holder', 'worker~me'], 'relay'], ['bind', 'relay']])

  own.joined = true
  assert.deepEqual(await peers.holders(manifest.assets['/good.png'].hash), ['own-holder'])
  assert.equal(own.lookups.length, 1)
  assert.equal(own.lookups[0].offers, undefined, 'offers go with the first lookup only')
  assert.equal(calls.length, 3, 'holders its own socket named need no route of their own')
})

test('a page its worker has not said it will ask for peer bytes (transparent mode: a first visitor) makes no offers, and its lookups go without; once it says so, the next lookup carries them', async () => {
  /** @type {any[]} */
  const lookups = []
  const relay = Object.assign(new Emitter(), {
    id: 'worker~me',
    joined: true,
    joining: null,
    stopped: false,
    ice: { iceServers: [{ urls: 'stun:127.0.0.1:3478' }] },
    unreachable: () => false,
    send: () => true,
    request: async (/** @type {any} */ m) => {
      lookups.push(m)
      return { type: 'holders', found: Object.fromEntries(m.hashes.map((/** @type {string} */ h) => [h, []])), offered: {} }
    }
  })
  const own = Object.assign(new Emitter(), { id: null, joined: false, joining: null, stopped: false, ice: { iceServers: [{ urls: 'stun:127.0.0.1:3478' }] }, unreachable: () => false, send: () => true, request: async () => { throw new Error('not joined') } })
  let prepared = 0
  const pool = {
    connected: () => [],
    reaching: () => false,
    prepare: async (/** @type {number} */ n) => { prepared += n; return [{ cid: 'c0', sdp: { type: 'offer', sdp: 'v=0' } }] },
    bind: () => {},
    introduce: () => {}
  }
  const peers = new PeerFetch({ stats: new Stats(), signaling: /** @type {any} */ (own), relay: /** @type {any} */ (relay), pool: /** @type {any} */ (pool), ready: new Promise(() => {}), config: { lookupTimeoutMs: 1000, connectTimeoutMs: 5000, quotaMb: 50 } })
  relay.emit('up', null)
  assert.deepEqual(await peers.holders(manifest.assets['/good.png'].hash), [])
  assert.equal(prepared, 0, 'no offers made, the ICE servers known and the socket up')
  assert.equal(lookups[0].offers, undefined)
  peers.expect()
  assert.equal(prepared, 3, 'made as soon as it is expected')
  await peers.holders(manifest.assets['/other.png'].hash)
  assert.deepEqual(lookups[1].offers.map((/** @type {any} */ o) => o.cid), ['c0'])
})
