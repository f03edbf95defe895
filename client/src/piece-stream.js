/**
 * A pieced asset (protocol/pieces.js) the store does not hold whole, sent as
 * its pieces come: the worker's answer to a range request (a `<video>`
 * playing or seeking) and to a plain GET of a large asset. Its piece list
 * comes from a holder, else from the origin (`maygh-pieces/` beside the
 * manifest, which maygh-manifest writes; without it, the request goes to
 * the network as without maygh); then each piece under the range is
 * loaded as any named asset is (loader.js: the store, else peers hedged with
 * the origin, asked for that piece's bytes alone), PIECES_AHEAD at a time, so
 * that the pieces of one asset come from several holders at once (each load
 * starts at the next holder: peer-fetch.js); each is verified on arrival and
 * kept in the store as a piece of its asset (cache.js `putPiece`: the asset is
 * announced once every piece is held). The first piece is wanted at once
 * (the element waits for it: the viewport's deadline); those after it are
 * read ahead (below the fold's).
 *
 * When nobody holds the asset (the coordinator's `/held` says so), a piece
 * at a time would cost the first visitor of a video its first frame (the
 * element would wait for a whole piece from the origin before its first
 * byte): what the store has not is then one origin request from the first
 * missing piece's start, its bytes passed on as they come, and each piece
 * verified and kept as it completes, so the next visitor finds a holder.
 */
import { PIECE_BYTES, matches, pieceCount, pieceNames } from '../../protocol/index.js'
import { rangeResponse } from './ranges.js'

/** Pieces loaded ahead of the one being sent, at most. */
export const PIECES_AHEAD = 4

/**
 * @param {object} o
 * @param {string} o.url the asset's URL, as the page asked for it
 * @param {import('./names.js').Name & { size: number, pieces: string }} o.name
 * @param {{ start: number, end: number } | null} o.range null: all of it (200)
 * @param {import('./loader.js').Loader} o.loader
 * @param {import('./cache.js').Cache} o.cache
 * @param {import('./loader.js').Via & { peers: NonNullable<import('./loader.js').Via['peers']> }} o.via
 *   its `origin(signal, headers)` fetches the asset's URL with these headers
 * @param {number} o.listMs how long to wait for a holder's piece list
 * @param {string} o.listUrl where the origin keeps it
 * @param {() => Promise<boolean | null>} [o.held] whether anybody holds the asset (null: cannot say)
 * @returns {Promise<Response | null>} null: neither a holder nor the origin gave its piece list
 */
export async function pieceStream ({ url, name, range, loader, cache, via, listMs, listUrl, held }) {
  const { hash, size, type = '' } = name
  const [list, anybody] = await Promise.all([pieceList(url, name, via, cache, listMs, listUrl), held?.() ?? null])
  if (!list) return null
  if (anybody === false) return streamThrough(url, name, range, pieceNames(list), { cache, loader, via })
  const names = pieceNames(list)
  const { start, end } = range ?? { start: 0, end: size - 1 }
  const first = Math.floor(start / PIECE_BYTES)
  const last = Math.floor(end / PIECE_BYTES)
  /** @type {Map<number, Promise<Uint8Array>>} pieces on their way, by index */
  const loading = new Map()
  const load = (/** @type {number} */ i) => {
    if (i > last || loading.has(i)) return
    const from = i * PIECE_BYTES
    const to = Math.min(size, from + PIECE_BYTES) - 1
    const piece = { hash: names[i], size: to + 1 - from, type, of: hash }
    const got = loader.named(url, piece, {
      ...via,
      priority: () => i === first ? 'viewport' : 'later',
      origin: (signal) => originPiece(via, from, to, signal),
      keep: (bytes) => cache.putPiece(hash, i, bytes)
    }).then((got) => got.bytes)
    // Read ahead, and perhaps never sent (the element went elsewhere): its failure is nobody's.
    got.catch(() => {})
    loading.set(i, got)
  }
  let next = first
  const body = new ReadableStream({
    pull: async (c) => {
      for (let i = next; i <= next + PIECES_AHEAD; i++) load(i)
      try {
        const bytes = await /** @type {Promise<Uint8Array>} */ (loading.get(next))
        loading.delete(next)
        const from = next * PIECE_BYTES
        c.enqueue(bytes.subarray(Math.max(0, start - from), Math.min(bytes.length, end + 1 - from)))
      } catch (err) {
        c.error(err)
        return
      }
      if (++next > last) c.close()
    }
  }, { highWaterMark: 0 })
  if (range) return rangeResponse(range, size, type, body)
  return new Response(body, { headers: { 'content-type': type, 'content-length': String(size) } })
}

/**
 * The asset's piece list: from the store, else from a holder within `ms`,
 * else from the origin (verified by its name), then kept (the asset is kept
 * in part from now on).
 * @param {string} url
 * @param {import('./names.js').Name & { size: number, pieces: string }} name
 * @param {import('./loader.js').Via & { peers: NonNullable<import('./loader.js').Via['peers']> }} via
 * @param {import('./cache.js').Cache} cache
 * @param {number} ms
 * @param {string} listUrl
 * @returns {Promise<Uint8Array<ArrayBuffer> | null>}
 */
async function pieceList (url, name, via, cache, ms, listUrl) {
  const held = await cache.get(name.pieces)
  if (held) return held.bytes
  const stop = new AbortController()
  const timer = setTimeout(() => stop.abort(), ms)
  const part = { hash: name.pieces, size: 32 * pieceCount(name.size), of: name.hash }
  const got = await via.peers(url, part, {
    signal: stop.signal,
    onBytes: () => {},
    deadline: () => ms,
    priority: () => 'viewport',
    originMs: () => null,
    race: () => {}
  }).catch(() => null).finally(() => clearTimeout(timer))
  const list = got?.bytes ?? await fetch(listUrl).then(async (res) => res.ok ? new Uint8Array(await res.arrayBuffer()) : null, () => null)
  if (!list || list.length !== part.size || !(await matches(list, name.pieces))) return null
  await cache.beginPieces(name.hash, name.size, name.type ?? '', name.pieces, list)
  return list
}

/**
 * One piece's bytes from the origin, as a response of exactly those bytes:
 * a range request, or the whole body cut down where the origin does not
 * answer ranges (200).
 * @param {import('./loader.js').Via} via
 * @param {number} from
 * @param {number} to inclusive
 * @param {AbortSignal} [signal]
 * @returns {Promise<Response>}
 */
async function originPiece (via, from, to, signal) {
  const res = await /** @type {NonNullable<import('./loader.js').Via['origin']>} */ (via.origin)(signal, { range: `bytes=${from}-${to}` })
  if (res.status === 206 && res.headers.get('content-range')?.startsWith(`bytes ${from}-${to}/`)) return res
  if (!res.ok) return res
  return new Response(new Uint8Array(await res.arrayBuffer()).subarray(from, to + 1), { status: 200 })
}

/**
 * A range of an asset nobody holds: the pieces the store has from there, the
 * rest from the origin in one request from the first missing piece's start,
 * passed on as it comes; each piece is verified as it completes and kept
 * (one that does not match its name, a stale manifest's, is passed on and
 * not kept, as the loader does with the origin's bytes).
 * @param {string} url
 * @param {import('./names.js').Name & { size: number, pieces: string }} name
 * @param {{ start: number, end: number } | null} range
 * @param {string[]} names the pieces'
 * @param {{ cache: import('./cache.js').Cache, loader: import('./loader.js').Loader, via: import('./loader.js').Via }} o
 *   the loader tracks the pieces being kept (`settled`: the page's `idle()` waits for them)
 * @returns {Response}
 */
function streamThrough (url, name, range, names, { cache, loader, via }) {
  const { hash, size, type = '' } = name
  const { start, end } = range ?? { start: 0, end: size - 1 }
  const last = Math.floor(end / PIECE_BYTES)
  const stop = new AbortController()
  let next = Math.floor(start / PIECE_BYTES)
  /** @type {ReadableStreamDefaultReader<Uint8Array> | null} the origin's answer, once asked */
  let reader = null
  /** the piece being gathered from it, and how much of it has come */
  let piece = new Uint8Array(0)
  let got = 0
  let t0 = performance.now()
  /** whether this pull has passed anything on, or ended the stream */
  let passed = false
  /** whether the piece being gathered began partway (then it is not kept) */
  let partway = false
  /** @param {ReadableStreamDefaultController<Uint8Array>} c @param {Uint8Array} bytes of piece `next`, from `at` in it */
  const pass = (c, bytes, at) => {
    const from = next * PIECE_BYTES + at
    const lo = Math.max(start, from)
    const hi = Math.min(end + 1, from + bytes.length)
    if (hi <= lo) return
    c.enqueue(bytes.slice(lo - from, hi - from))
    passed = true
  }
  const body = new ReadableStream({
    // A pull that passes nothing on is not called again (the stream waits for a read it already
    // has): each one reads until it has passed something on, or ended.
    pull: async (c) => {
      passed = false
      while (!passed) await step(c)
    },
    cancel: () => stop.abort()
  }, { highWaterMark: 0 })
  /** @param {ReadableStreamDefaultController<Uint8Array>} c */
  async function step (c) {
    try {
      if (!reader) {
        const kept = await cache.get(names[next])
        if (kept) {
          via.stats.loaded({ url, hash: names[next], source: 'cache', bytes: kept.bytes.length, ms: 0 })
          pass(c, kept.bytes, 0)
          if (++next > last) {
            c.close()
            passed = true
          }
          return
        }
        // From the byte the element wants (a seek waits for no more than it would without maygh); a
        // first piece begun partway is passed on, not kept (it cannot be verified).
        const from = Math.max(start, next * PIECE_BYTES)
        const to = Math.min(size, (last + 1) * PIECE_BYTES) - 1
        const res = await /** @type {NonNullable<import('./loader.js').Via['origin']>} */ (via.origin)(stop.signal, { range: `bytes=${from}-${to}` })
        if (!res.ok || !res.body) throw new Error(`origin ${res.status}`)
        reader = res.body.getReader()
        // An origin that answers no ranges sends all of it: what comes before is skipped.
        let skip = res.status === 206 ? 0 : from
        piece = new Uint8Array(Math.min(PIECE_BYTES, size - next * PIECE_BYTES))
        got = from - next * PIECE_BYTES
        partway = got > 0
        t0 = performance.now()
        while (skip > 0) {
          const { value, done } = await reader.read()
          if (done) throw new Error('the origin ended early')
          if (value.length > skip) return await gather(c, value.subarray(skip))
          skip -= value.length
        }
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the origin ended early')
      await gather(c, value)
    } catch (err) {
      stop.abort()
      c.error(err)
      passed = true
    }
  }
  /** @param {ReadableStreamDefaultController<Uint8Array>} c @param {Uint8Array} bytes */
  async function gather (c, bytes) {
    while (bytes.length) {
      const n = Math.min(bytes.length, piece.length - got)
      piece.set(bytes.subarray(0, n), got)
      pass(c, bytes.subarray(0, n), got)
      got += n
      bytes = bytes.subarray(n)
      if (got < piece.length) continue
      const i = next
      const whole = piece
      via.stats.loaded({ url, hash: names[i], source: 'origin', bytes: partway ? whole.length - (start - i * PIECE_BYTES) : whole.length, ms: performance.now() - t0 })
      if (!partway) loader.track(matches(whole, names[i]).then((ok) => { if (ok) return cache.putPiece(hash, i, whole) })).catch(() => {})
      partway = false
      if (++next > last) {
        stop.abort()
        c.close()
        passed = true
        return
      }
      piece = new Uint8Array(Math.min(PIECE_BYTES, size - next * PIECE_BYTES))
      got = 0
      t0 = performance.now()
    }
  }
  if (range) return rangeResponse(range, size, type, body)
  return new Response(body, { headers: { 'content-type': type, 'content-length': String(size) } })
}
