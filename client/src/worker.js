/// <reference lib="webworker" />
/**
 * Entry point of `maygh-sw.js`, the service worker of transparent mode. It
 * keeps the asset store (IndexedDB) and the manifest, and answers the
 * same-origin GETs the manifest names (`<img src>`, `srcset`, `<picture>`,
 * CSS `url()`, fonts, scripts: whatever the page's markup asks for) from the
 * store, from other visitors or from the origin, hedged (loader.js). Workers
 * have no WebRTC, so peer bytes come from the page that made the request: the
 * worker asks it over a MessagePort, and the page (transparent.js) fetches from its
 * peers and hands back verified bytes. A range request (a `<video>` or
 * `<audio>` element's, seeking) for a named asset the store holds is answered
 * from the store (206), reading only the pieces under it (cache.js). Everything
 * else — other origins, non-GET, other range requests, navigations, unnamed
 * URLs — is not touched and goes to the network as without maygh.
 *
 * Its settings come in its own URL's query (the page registers
 * `maygh-sw.js?manifest=…&quotaMb=…`), read like the script tag's.
 *
 * What it says to pages and hears from them (`{maygh: kind, …}`) is the
 * contract in worker-messages.js.
 */
import { Names } from './names.js'
import { Cache } from './cache.js'
import { OriginClock } from './hedge.js'
import { belowFold, priorityOf, smooth } from '../../policy/hedge-rule.js'
import { Loader } from './loader.js'
import { HeldCheck } from './held-check.js'
import { TurnBatch } from './turn-batch.js'
import { WorkerSocket } from './worker-socket.js'
import { coordinatorUrls, readConfig } from './config.js'
import { parseRange, rangeResponse } from './ranges.js'
import { pieceStream } from './piece-stream.js'
import { CLIENT_ERRORS, LIMITS, PIECE_BYTES, isSri, matches, pieceListPath } from '../../protocol/index.js'

/**
 * @typedef {import('./worker-messages.js').WorkerMessage} WorkerMessage
 * @typedef {import('./worker-messages.js').PageMessage} PageMessage
 */

/**
 * Post to a page only what the contract has.
 * @param {Client | null | undefined} page
 * @param {WorkerMessage} msg
 */
const toPage = (page, msg) => page?.postMessage(msg)

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self))
const config = readConfig(Object.fromEntries(new URL(location.href).searchParams), console.warn)
const names = new Names(config.manifest)
names.first = names.refresh()
const cache = new Cache({ quotaBytes: config.quotaMb * 1048576, onChange: (change) => tell({ maygh: 'held', ...change, bytes: cache.bytes }) })
const cacheReady = cache.open()
const clock = new OriginClock(config)
const loader = new Loader({ names, cache, cacheReady, clock })
/**
 * Asks the coordinator whether anybody holds what a page wants before the
 * page can: the coordinators the last page to join named (`peers`).
 * @type {HeldCheck | null}
 */
let heldCheck = null
/**
 * The worker's own coordinator socket: a page's first lookup goes through it
 * while the page's own socket is still opening (worker-socket.js).
 */
const socket = new WorkerSocket({
  toPage: (page, msg) => page.postMessage(/** @satisfies {WorkerMessage} */ ({ maygh: 'frame', msg })),
  changed: () => sw.clients.matchAll({ type: 'window' }).then((all) => { for (const c of all) if (pages.get(c.id)?.said) toPage(c, via()) }, () => {})
})
/** @returns {WorkerMessage} what the worker's socket is now */
const via = () => ({ maygh: 'via', id: socket.up ? socket.id : null, ...(socket.up && { ice: socket.ice }) })
/** @type {Set<Promise<unknown>>} adoptions in progress */
const adopting = new Set()
/**
 * Pages whose script has said `hello`: only these are sent messages (one to
 * a page whose script is not listening yet can be lost). Until then what is
 * for a page waits here (`held`: stats, at most MAX_HELD), and it is sent
 * `ping`, which a listening page answers with `hello`.
 * `placement`: where its images lie, as its last `later` said (policy/hedge-rule.js belowFold); a page
 * whose hello said `placing` has all its images counted below the fold until then, and so has a
 * page whose hello has not come yet (pagesPlace) while /held can say who holds its images, until
 * it is helloDue() late.
 * `opened`: when its navigation reached the worker (performance.now(); undefined: not seen).
 * `pinged`: when it was last sent a ping.
 * `lookups`: its requests before its hello, looked up over the worker's socket (heldFor); `invited`: one of those invites holders, or did.
 * `posted`: the last message posted to it after its hello (postTo), once sent.
 * @typedef {{ said: boolean, waiters: (() => void)[], held: WorkerMessage[], placement: import('../../policy/hedge-rule.js').Placement, opened?: number, pinged: number, expects?: boolean, lookups?: TurnBatch<void, Record<string, any> | undefined>, invited?: boolean, posted?: Promise<void> }} Page
 * @type {Map<string, Page>}
 */
const pages = new Map()
const MAX_HELD = 1000
/**
 * Whether the last page to tell found peers (joined a coordinator). While not,
 * a page's requests made before its script says `hello` go to the origin at
 * once instead of waiting for it.
 */
let peersUp = true
/** whether a page has said `peers` to this worker (what it kept from an earlier start is then stale) */
let told = false
/**
 * Whether a page has said hello (the site's pages run maygh.js): a page
 * navigating is then presumed to place its images (`hello {placing}`), until
 * its own hello says, or it is helloDue() late.
 */
let pagesPlace = false
/** How long pages took from their navigation to their hello, smoothed (ms; null before any). */
let helloPace = /** @type {number | null} */ (null)
/**
 * A page not heard from this long after its navigation is no longer presumed
 * to place its images (its script is late, or it has none): twice the usual
 * wait, and at least HELLO_DUE_FLOOR_MS.
 */
const helloDue = () => helloPace === null ? HELLO_DUE_FLOOR_MS * 2 : Math.max(HELLO_DUE_FLOOR_MS, 2 * helloPace)
const HELLO_DUE_FLOOR_MS = 500
/** Assets /held could not say anything about when last asked (the last UNKNOWN_MAX of them). */
const unknownHeld = new Set()
const UNKNOWN_MAX = 4096
/**
 * Whether a page that has not said hello yet may be presumed to place this
 * image: /held can say who holds it, and the hello is not late.
 * @param {Page} page
 * @param {string} hash
 */
const presumedPlacing = (page, hash) => !!heldCheck && !unknownHeld.has(hash) && !(page.opened !== undefined && performance.now() - page.opened > helloDue())
/** A page whose navigation began this recently is kept though it has no client yet. */
const NAVIGATING_MS = 30000

/** @param {string} id @returns {Page} */
function pageOf (id) {
  let page = pages.get(id)
  if (!page) pages.set(id, (page = { said: false, waiters: [], held: [], placement: { below: new Set(), above: new Set(), placing: false }, pinged: -Infinity }))
  return page
}

/**
 * Resolves once the page has said hello (never, if it has no maygh script: the hedge deadline bounds that).
 * @param {Client} client
 */
function listening (client) {
  const page = pageOf(client.id)
  if (page.said) return Promise.resolve()
  // One ping for a page's burst of requests, not one each: every ping the page reads costs it a
  // `hello` and the worker a `held` (a page of 40 images paid 40 of each before its first lookup).
  const now = performance.now()
  if (now - page.pinged >= PING_EVERY_MS) {
    page.pinged = now
    toPage(client, { maygh: 'ping' })
  }
  return new Promise((resolve) => page.waiters.push(() => resolve(undefined)))
}

/** A page that has not answered a ping is pinged again after this long, by its next request. */
const PING_EVERY_MS = 250

sw.addEventListener('install', () => sw.skipWaiting())
sw.addEventListener('activate', (e) => e.waitUntil(sw.clients.claim()))

sw.addEventListener('fetch', (event) => {
  const req = event.request
  // A page view: revalidate the manifest meanwhile (a 304 while it is unchanged).
  if (req.mode === 'navigate') {
    // The page to come is presumed to say where its images lie, as the last one did, until it says otherwise.
    if (event.resultingClientId) {
      const page = pageOf(event.resultingClientId)
      page.opened = performance.now()
      page.placement.placing = pagesPlace
    }
    // Its page's first lookup may go through the worker's socket: opened now if it was lost.
    socket.open()
    return event.waitUntil(names.refresh())
  }
  const url = new URL(req.url)
  if (req.method !== 'GET' || url.origin !== location.origin || url.href === names.url) return
  const range = req.headers.get('range')
  if (range !== null) {
    const name = names.listed?.get(url.href.replace(/#.*/, ''))
    if (name && cache.has(name.hash)) event.respondWith(fromStore(req, name, range, event.clientId))
    else if (name && isPieced(name)) event.respondWith(fromPieces(req, name, range, event.clientId))
    else if (name) event.respondWith(wholeRange(req, name, range, event.clientId))
    return
  }
  // Known at once once the manifest is in: an unnamed URL is left alone.
  if (names.listed && !names.listed.has(url.href.replace(/#.*/, ''))) return
  event.respondWith(respond(req, event.clientId))
})

/**
 * @param {import('./names.js').Name} name
 * @returns {name is import('./names.js').Name & { size: number, pieces: string }} whether it is named in pieces too
 */
const isPieced = (name) => typeof name.pieces === 'string' && isSri(name.pieces) && Number.isSafeInteger(name.size) && /** @type {number} */ (name.size) > 0

/**
 * A pieced asset the store does not hold whole, from its pieces as they come
 * (piece-stream.js); without a holder to give its piece list, as without
 * maygh (a range request from the network, a plain GET the whole asset's way).
 * @param {Request} req
 * @param {import('./names.js').Name & { size: number, pieces: string }} name
 * @param {string | null} header its `Range`, if any
 * @param {string} clientId
 * @returns {Promise<Response>}
 */
async function fromPieces (req, name, header, clientId) {
  const range = header === null ? null : parseRange(header, name.size)
  if (range === 'unsatisfiable') return rangeResponse(range, name.size, '')
  const peers = peersOf(clientId)
  const streamed = (header === null || range) && peers && await pieceStream({
    url: req.url,
    name,
    range,
    loader,
    cache,
    via: { stats: statsFor(clientId), peers, origin: (signal, headers) => fetch(req.url, { signal, headers }) },
    listMs: clock.deadline(),
    listUrl: new URL(pieceListPath(name.pieces), names.url).href,
    held: async () => heldCheck ? heldCheck.held(name.hash) : null
  }).catch(() => null)
  if (streamed) return streamed
  return header === null ? wholeAsset(req, name, clientId) : fetch(req)
}

/**
 * A range request for a smaller asset (not in pieces) the store does not
 * hold: the asset loaded whole as any named asset is (so kept, and served to
 * others from then on: an `<audio>` clip asks with `Range`), the range cut
 * out of it; several ranges, or one it cannot read, from the network.
 * @param {Request} req
 * @param {import('./names.js').Name} name
 * @param {string} header its `Range`
 * @param {string} clientId
 * @returns {Promise<Response>}
 */
async function wholeRange (req, name, header, clientId) {
  if (!Number.isSafeInteger(name.size) || parseRange(header, /** @type {number} */ (name.size)) === null) return fetch(req)
  const res = await wholeAsset(new Request(req.url), name, clientId)
  if (!res.ok) return res
  const bytes = new Uint8Array(await res.arrayBuffer())
  const range = parseRange(header, bytes.length)
  if (range === null) return fetch(req)
  return range === 'unsatisfiable' ? rangeResponse(range, bytes.length, '') : rangeResponse(range, bytes.length, res.headers.get('content-type') ?? '', bytes.slice(range.start, range.end + 1))
}

/**
 * A range request for an asset the store holds: its bytes from there, else
 * from the network as without maygh (several ranges at once; a store that
 * fails its first read). A pieced asset's range is sent piece by piece as
 * each is read (a `<video>` asks for all of it from where it plays: its first
 * frame need not wait for the rest).
 * @param {Request} req
 * @param {import('./names.js').Name} name
 * @param {string} header its `Range`
 * @param {string} clientId
 * @returns {Promise<Response>}
 */
async function fromStore (req, name, header, clientId) {
  const t0 = performance.now()
  const held = cache.meta.get(name.hash)
  const size = held?.size ?? 0
  const range = parseRange(header, size)
  if (range === 'unsatisfiable') return rangeResponse(range, size, '')
  // A pieced asset's first piece's worth, then the rest as the response is read; any other, whole.
  const step = (/** @type {number} */ at) => !range ? 0 : !held?.parts ? range.end : Math.min(range.end, (Math.floor(at / PIECE_BYTES) + 1) * PIECE_BYTES - 1)
  const first = range && await cache.range(name.hash, range.start, step(range.start))
  if (!range || !first) return fetch(req)
  const type = name.type || first.type
  const done = (/** @type {number} */ bytes) => statsFor(clientId).loaded({ url: req.url, hash: name.hash, source: 'cache', bytes, ms: performance.now() - t0 })
  if (step(range.start) === range.end) {
    done(first.bytes.length)
    return rangeResponse(range, size, type, first.bytes)
  }
  let at = step(range.start) + 1
  const body = new ReadableStream({
    start: (c) => c.enqueue(first.bytes),
    pull: async (c) => {
      const next = await cache.range(name.hash, at, step(at))
      // Gone from the store meanwhile, or corrupt (then deleted): the element asks again, and the
      // network answers.
      if (!next) return c.error(new Error('no longer in the store'))
      c.enqueue(next.bytes)
      at += next.bytes.length
      if (at > range.end) {
        done(range.end + 1 - range.start)
        c.close()
      }
    }
  }, { highWaterMark: 0 })
  return rangeResponse(range, size, type, body)
}

/**
 * @param {Request} req
 * @param {string} clientId the page that asked
 * @returns {Promise<Response>}
 */
async function respond (req, clientId) {
  const name = await names.get(req.url)
  if (!name) return fetch(req)
  if (isPieced(name) && !cache.has(name.hash)) return fromPieces(req, name, null, clientId)
  return wholeAsset(req, name, clientId)
}

/**
 * A named asset whole: from the store, from peers hedged with the origin (loader.js).
 * @param {Request} req
 * @param {import('./names.js').Name} name
 * @param {string} clientId the page that asked
 * @returns {Promise<Response>}
 */
async function wholeAsset (req, name, clientId) {
  /** @type {Response | null} the origin's answer, kept in case it is a failure to pass on */
  let answer = null
  /** @type {(res: Response) => void} */
  let passOn = () => {}
  // The origin's answer as it comes, once the origin is the only source (loader.js `stream`) …
  const streamed = new Promise((resolve) => { passOn = resolve })
  // … else the bytes once whole, from wherever they came.
  const whole = loader.named(req.url, name, {
    stats: statsFor(clientId),
    peers: peersOf(clientId),
    // A request of the worker's own for the URL, not the page's request passed on: Firefox held the
    // page's (its 7th–10th images of a first visit) ~500 ms for one of its 6 connections to the origin
    // in 1–3 visits of 10, the worker's own in none of 30 (bench/page-load.js, README).
    origin: async (signal) => (answer = await fetch(req.url, { signal, credentials: 'same-origin' })),
    stream: passOn,
    priority: () => {
      const page = pageOf(clientId)
      // Before its hello, a page is presumed to place its images while /held can tell whether
      // anybody holds them (what nobody holds goes to the origin as soon as it says so; when it
      // cannot say, the request races the origin as ever), and only until its hello is late.
      const placed = page.said || presumedPlacing(page, name.hash)
      return priorityOf(req.destination, placed && belowFold(page.placement, req.url))
    }
  }).then(
    ({ bytes, type }) => new Response(bytes, { headers: { 'content-type': type, 'content-length': String(bytes.length) } }),
    // Failed everywhere: the page gets what the origin said (a 404, say), or a network error.
    () => answer ?? Response.error()
  )
  return Promise.race([streamed, whole])
}

/**
 * The page's stats, told by message.
 * @param {string} clientId
 * @returns {import('./loader.js').Via['stats']}
 */
function statsFor (clientId) {
  return {
    loaded: (e) => postTo(clientId, { maygh: 'loaded', e }),
    error: (e) => postTo(clientId, { maygh: 'error', e }),
    failed: () => postTo(clientId, { maygh: 'failed' })
  }
}

/**
 * Send a page a message, or keep it for the page until its hello (at most MAX_HELD).
 * @param {string} clientId
 * @param {WorkerMessage} msg
 * @returns {Promise<void> | undefined} once sent, when it is sent now
 */
function postTo (clientId, msg) {
  const page = pageOf(clientId)
  if (!page.said) {
    if (page.held.length < MAX_HELD) page.held.push(msg)
    return
  }
  // In the order posted, each after the one before: `clients.get` may answer in any order, and an
  // invited holder's offer that reached the page before its `invited` would be dropped there.
  return (page.posted = (page.posted ?? Promise.resolve()).then(() => sw.clients.get(clientId)).then((c) => toPage(c, msg), () => {}))
}

/**
 * Peer bytes through the page that asked: it holds the peer connections.
 * A page that never answers (its script not loaded yet, or none) costs only
 * the hedge deadline: the origin is asked meanwhile; and nothing at all while
 * the last page found no peers.
 * @param {string} clientId
 * @returns {import('./loader.js').Via['peers']}
 */
function peersOf (clientId) {
  return async (url, name, how) => {
    const { signal } = how
    if (!peersUp && !pageOf(clientId).said) return null
    /** @type {Promise<unknown> | undefined} the page has its worker's lookup of this asset */
    let told
    // Asked before the page's script has said hello: whether anybody holds it at all. Nobody, the
    // coordinator says → the origin now, whatever the page is doing by then (its request is
    // cancelled). Held, or no answer: the page's lookup decides, as without it.
    const page = new AbortController()
    const stop = () => page.abort()
    signal.addEventListener('abort', stop, { once: true })
    if (!pageOf(clientId).said) {
      // A piece is held by its asset's holders (they announce the asset, not its pieces).
      const asset = name.of ?? name.hash
      if (!heldCheck) expecting(clientId)
      const check = heldCheck ? heldFor(clientId, asset) : null
      told = check?.told
      check?.held.then((held) => {
        if (held === false) stop()
        else expecting(clientId)
        unknownHeld.delete(asset)
        if (held === null) unknownHeld.add(asset)
        if (unknownHeld.size > UNKNOWN_MAX) unknownHeld.delete(/** @type {string} */ (unknownHeld.values().next().value))
      })
    }
    const client = clientId ? await sw.clients.get(clientId) : undefined
    if (!client) return null
    try {
      return await fromPage(client, url, name, { ...how, signal: page.signal }, told)
    } finally {
      signal.removeEventListener('abort', stop)
    }
  }
}

/** Holders invited to make offers for a page before its script runs: as many as a page's own first lookup offers to. */
const INVITES = 3

/**
 * Whether anybody holds `asset`, for a page whose script has not said hello.
 * While the worker's socket is up, each turn of the page's requests goes as
 * one lookup over it, whose reply the page is handed (`invited`) before it is
 * asked for those assets: it then needs no lookup of its own for them. Until
 * one of them has, each also invites up to INVITES of the holders it names to
 * make offers for the page (worker-socket.js `lookup`): their offers wait for
 * the page's script, which only has to answer them. Else a held check
 * (held-check.js).
 * @param {string} clientId
 * @param {string} asset
 * @returns {{ held: Promise<boolean | null>, told?: Promise<unknown> }} `held` null: not known; `told`: once the page has the lookup's reply
 */
function heldFor (clientId, asset) {
  if (!socket.up) return { held: /** @type {HeldCheck} */ (heldCheck).held(asset) }
  const page = pageOf(clientId)
  page.lookups ??= new TurnBatch(LIMITS.maxLookupHashes, () => {}, async (hashes) => {
    // One lookup invites at a time: the next, if it invited nobody.
    const invites = page.invited ? 0 : INVITES
    page.invited = true
    const end = { postMessage: (/** @type {WorkerMessage} */ msg) => postTo(clientId, msg) }
    const reply = await socket.lookup(hashes, invites, end, heldCheck?.timeoutMs ?? config.lookupTimeoutMs)
    const offered = reply?.offered ?? {}
    if (invites && !Object.keys(offered).length) page.invited = false
    if (!reply) return
    await postTo(clientId, { maygh: 'invited', found: reply.found ?? {}, offered })
    return reply.found
  })
  const told = page.lookups.add(asset)
  return { held: told.then((found) => Array.isArray(found?.[asset]) ? found[asset].length > 0 : null, () => null), told }
}

/**
 * Tell a page, once, that it will be asked for peer bytes (`expect`): at once,
 * though its script may not listen yet (what is posted is kept for it until
 * then), and again as it says hello.
 * @param {string} clientId
 */
function expecting (clientId) {
  const page = pageOf(clientId)
  if (page.expects) return
  page.expects = true
  // Where holders were invited for it, after `invited`, as it says hello: it then makes no offers.
  if (!page.invited || page.said) sw.clients.get(clientId).then((c) => toPage(c, { maygh: 'expect' }), () => {})
}

/** `get`s sent so far: the next one's id */
let gets = 0
/** @type {Map<number, () => void>} the `get`s a page is answering, by id: what to call as it says their peer bytes flow (`moving`) */
const flowing = new Map()

/**
 * Ask the page for an asset from its peers, once its script listens.
 * @param {Client} client
 * @param {string} url
 * @param {import('./names.js').Name} name
 * @param {import('./loader.js').PeerHow} how `signal`: give up (a `cancel` goes to the page if it was asked)
 * @param {Promise<unknown>} [told] asked once the page has the worker's lookup of it (heldFor)
 * @returns {Promise<import('./worker-messages.js').PeerAsset | null>}
 */
async function fromPage (client, url, name, { signal, onBytes, deadline, priority, originMs, race }, told) {
  // Given up already (nobody holds it, the coordinator said while the page was looked for): not asked.
  if (signal.aborted) return null
  await Promise.race([Promise.all([listening(client), told?.catch(() => {})]), new Promise((resolve) => signal.addEventListener('abort', resolve))])
  if (signal.aborted) return null
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel()
    const id = ++gets
    flowing.set(id, onBytes)
    const end = (/** @type {any} */ asset) => {
      flowing.delete(id)
      port1.close()
      resolve(asset)
    }
    port1.onmessage = ({ data }) => {
      const reply = /** @type {import('./worker-messages.js').GetReply | undefined} */ (data)
      // (`bytes`: a page from before `moving`, which a new worker version took over)
      if (reply?.t === 'bytes') onBytes()
      else if (reply?.t === 'race') race()
      else if (!reply?.asset) end(null)
      else {
        // The page hands peer bytes over unverified: checked here, off its main thread, before anything keeps
        // or shows them. A mismatch is told to the page (it reports the peer and asks it nothing more), and
        // the request goes on as if no peer had given it.
        const asset = reply.asset
        matches(asset.bytes, name.hash).then((ok) => {
          if (!ok) toPage(client, { maygh: 'bad', url, hash: name.of ?? name.hash, peer: asset.peer })
          end(ok ? asset : null)
        }, () => end(null))
      }
    }
    signal.addEventListener('abort', () => {
      port1.postMessage(/** @satisfies {import('./worker-messages.js').GetCancel} */ ({ t: 'cancel' }))
      end(null)
    }, { once: true })
    client.postMessage(/** @satisfies {WorkerMessage} */ ({ maygh: 'get', id, url, name, quietMs: deadline(), priority: priority(), originMs: originMs() }), [port2])
  })
}

/** @returns {import('./worker-messages.js').Held} all the store holds now (a page's hello, and the reply to its `idle`) */
const holdings = () => ({ maygh: 'held', all: cache.hashes(), bytes: cache.bytes })

/** @param {WorkerMessage} msg to every page of ours */
function tell (msg) {
  sw.clients.matchAll({ type: 'window' }).then((all) => { for (const c of all) toPage(c, msg) }, () => {})
}

sw.addEventListener('message', (event) => {
  const m = /** @type {PageMessage | undefined} */ (event.data)
  const port = event.ports[0]
  const source = /** @type {Client | null} */ (event.source)
  if (m?.maygh === 'hello') {
    if (source) {
      const p = pageOf(source.id)
      if (!p.said) {
        p.placement.placing = m.placing === true
        pagesPlace = true
        if (p.opened !== undefined) helloPace = smooth(helloPace, performance.now() - p.opened)
      }
      p.said = true
      // Before any `get`: the page's first lookup may go through the worker's socket, and the offers of
      // the holders invited for it (`invited`, kept with the rest) come that way.
      if (socket.up) toPage(source, via())
      for (const msg of p.held.splice(0)) toPage(source, msg)
      // Again: told before its script listened, a page that had finished parsing by then missed it.
      if (p.expects) toPage(source, { maygh: 'expect' })
      for (const w of p.waiters.splice(0)) w()
      // Forget pages that have gone. Uncontrolled ones too: a first view says hello before
      // clients.claim() has made it ours, and forgetting it would hold its stats for good. Not one
      // whose navigation is on its way (no client yet).
      const now = performance.now()
      sw.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((all) => {
        for (const [id, page] of pages) {
          const navigating = page.opened !== undefined && now - page.opened < NAVIGATING_MS
          if (!navigating && !all.some((c) => c.id === id)) pages.delete(id)
        }
      })
    }
    clock.observe(m.ttfb)
    event.waitUntil(cacheReady.then(() => toPage(source, holdings())))
  } else if (m?.maygh === 'moving') {
    if (Array.isArray(m.ids)) for (const id of m.ids) flowing.get(id)?.()
  } else if (m?.maygh === 'later') {
    if (source && Array.isArray(m.urls)) {
      pageOf(source.id).placement = { below: new Set(m.urls.map(String)), above: new Set(Array.isArray(m.above) ? m.above.map(String) : []), placing: m.placing === true }
    }
  } else if (m?.maygh === 'peers') {
    told = true
    peersSaid(m)
    // Kept for the next start of this worker (a browser stops an idle one after ~30 s).
    event.waitUntil(caches.open(KEPT_CACHE).then((c) => c.put(PEERS_KEY, new Response(JSON.stringify(m)))).catch(() => {}))
  } else if (m?.maygh === 'frame') {
    const msg = m.msg
    if (source && msg && typeof msg === 'object' && !socket.send(source, msg)) {
      // Not up (any more): the page's own socket takes its frames from now on.
      toPage(source, via())
      if (msg.ref !== undefined) toPage(source, { maygh: 'frame', msg: { type: 'error', code: CLIENT_ERRORS.MGH_ERR_OFFLINE.code, message: CLIENT_ERRORS.MGH_ERR_OFFLINE.message, ref: msg.ref } })
    }
  } else if (m?.maygh === 'read' && port) {
    // Answered whatever happens (null: not read): a page serving a peer waits for it, and its channel with it.
    event.waitUntil(cacheReady.then(() => cache.get(String(m.hash))).catch(() => null).then((/** @type {import('./worker-messages.js').ReadReply} */ a) => port.postMessage(a, a ? [a.bytes.buffer] : [])))
  } else if (m?.maygh === 'adopt' && port && Array.isArray(m.urls)) {
    const p = adopt(m.urls.map(String), source?.id ?? '')
    adopting.add(p)
    event.waitUntil(p.finally(() => {
      adopting.delete(p)
      port.postMessage(null)
    }))
  } else if (m?.maygh === 'idle' && port) {
    event.waitUntil((async () => {
      do {
        await loader.settled()
        await Promise.allSettled([...adopting])
      } while (loader.active.size || adopting.size)
      // What it holds now: the page's 'held' news goes another way and may come after this reply.
      port.postMessage(holdings())
    })())
  }
})

/**
 * What the last page to join said of its coordinators (`peers`): whether its
 * next pages' requests wait for their script, the `/held` check, the worker's own socket.
 * @param {import('./worker-messages.js').PeersUp} m
 */
function peersSaid (m) {
  peersUp = m.up === true
  const urls = coordinatorUrls(String(m.coordinator ?? ''))
  if (!peersUp || !urls.length) heldCheck = null
  else if (!heldCheck || !urls.includes(heldCheck.url)) heldCheck = new HeldCheck({ urls, timeoutMs: Number(m.lookupTimeoutMs) || config.lookupTimeoutMs })
  const token = typeof m.token === 'string' ? m.token : undefined
  socket.configure(peersUp && urls.length ? { urls, visitor: typeof m.visitor === 'string' ? m.visitor : undefined, token } : null)
}

/** Where the worker keeps the last `peers` across its restarts (Cache Storage: no schema to migrate). */
const KEPT_CACHE = 'maygh-worker'
const PEERS_KEY = '/maygh-worker/peers'
// A worker started afresh (at a navigation, say) knows at once what the last one was told, unless told anew meanwhile.
caches.open(KEPT_CACHE).then((c) => c.match(PEERS_KEY)).then((r) => r?.json()).then((m) => { if (m?.maygh === 'peers' && !told) peersSaid(m) }).catch(() => {})

/**
 * Store what a page loaded before this worker controlled it (its first
 * visit): each named URL is read again with `force-cache`, which the HTTP
 * cache answers without the origin when the asset's headers let it keep it,
 * then verified, stored and so announced. Counted as origin bytes: they came
 * from there.
 * @param {string[]} urls
 * @param {string} clientId
 */
async function adopt (urls, clientId) {
  const stats = statsFor(clientId)
  await cacheReady
  await Promise.all(urls.map(async (url) => {
    const name = await names.get(url)
    if (!name || cache.has(name.hash)) return
    try {
      const t0 = performance.now()
      const res = await fetch(url, { cache: 'force-cache' })
      const bytes = new Uint8Array(await res.arrayBuffer())
      if (!res.ok || !(await matches(bytes, name.hash))) return
      await cache.put(name.hash, bytes, name.type || res.headers.get('content-type') || '', name.pieces)
      stats.loaded({ url, hash: name.hash, source: 'origin', bytes: bytes.length, ms: performance.now() - t0 })
    } catch {}
  }))
}
