/**
 * A pieced asset sent as its pieces come (piece-stream.js), in Node with the
 * real Loader and Cache (fake-indexeddb) and holders as functions: pieces
 * loaded a few at a time over several holders, the range cut out of them,
 * each piece kept so the asset is held once all are; the origin asked for a
 * piece's bytes alone, and cut down where it answers the whole; no holder to
 * give the piece list: the origin's (maygh-pieces/), else none (the worker
 * goes to the network).
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { IDBFactory } from 'fake-indexeddb'
import { Cache } from '../src/cache.js'
import { Loader } from '../src/loader.js'
import { Names } from '../src/names.js'
import { OriginClock } from '../src/hedge.js'
import { PIECES_AHEAD, pieceStream } from '../src/piece-stream.js'
import { PIECE_BYTES, PIECED_ABOVE, pieceListPath, splitPieces, sriOf } from '../../protocol/index.js'
import { createServer } from 'node:http'

const clip = new Uint8Array(randomBytes(PIECED_ABOVE + 4 * PIECE_BYTES + 99))

/** @type {Map<string, Uint8Array>} what the origin keeps beside its manifest, by path */
const beside = new Map()
/** @type {string[]} */
const listRequests = []
const origin = createServer((req, res) => {
  listRequests.push(String(req.url))
  const list = beside.get(String(req.url).slice(1))
  if (list) res.writeHead(200).end(list)
  else res.writeHead(404).end()
})
before(async () => {
  await new Promise((resolve) => origin.listen(0, '127.0.0.1', () => resolve(undefined)))
  Object.assign(globalThis, { location: new URL(`http://127.0.0.1:${/** @type {any} */ (origin.address()).port}/`) })
})
after(() => {
  origin.close()
  delete (/** @type {any} */ (globalThis)).location
})

/**
 * @param {{ holders: number, answersMs?: number, originRanges?: boolean, slowPeers?: boolean }} o
 */
async function setup ({ holders, answersMs = 5, originRanges = true }) {
  const split = await splitPieces(clip)
  const name = { hash: await sriOf(clip), size: clip.length, type: 'video/mp4', pieces: split.root }
  const cache = await new Cache({ quotaBytes: 64 << 20, indexedDB: new IDBFactory() }).open()
  const clock = new OriginClock({ hedge: 'balanced', hedgeMinMs: 60000, hedgeMaxMs: 60000 })
  const loader = new Loader({ names: new Names('/maygh-manifest.json'), cache, cacheReady: Promise.resolve(), clock })
  const byName = new Map([[split.root, split.list], ...split.names.map((n, i) => /** @type {[string, Uint8Array]} */ ([n, split.pieces[i]]))])
  /** @type {{ peer: string, hash: string }[]} */
  const asked = []
  let turn = 0
  let inFlight = 0
  let mostInFlight = 0
  /** @type {string[]} */
  const origin = []
  /** @type {import('../src/loader.js').Via & { peers: NonNullable<import('../src/loader.js').Via['peers']> }} */
  const via = {
    stats: { loaded: () => {}, error: () => {}, failed: () => {} },
    peers: async (_url, part, how) => {
      if (holders === 0 || part.of !== name.hash) return null
      const peer = `h${turn++ % holders}`
      asked.push({ peer, hash: part.hash })
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      await new Promise((resolve) => setTimeout(resolve, answersMs))
      inFlight--
      const bytes = byName.get(part.hash)
      if (how.signal.aborted || !bytes) return null
      return { bytes: new Uint8Array(bytes), type: '', peer }
    },
    origin: async (_signal, headers = {}) => {
      origin.push(headers.range ?? 'all')
      const m = /^bytes=(\d+)-(\d+)$/.exec(headers.range ?? '')
      if (!m || !originRanges) return new Response(clip, { status: 200 })
      return new Response(clip.subarray(Number(m[1]), Number(m[2]) + 1), { status: 206, headers: { 'content-range': `bytes ${m[1]}-${m[2]}/${clip.length}` } })
    }
  }
  const listUrl = new URL(pieceListPath(split.root), globalThis.location.href).href
  return { name, cache, loader, via, asked, origin, split, mostInFlight: () => mostInFlight, listUrl }
}

/** @param {Response} res */
const bytesOf = async (res) => new Uint8Array(await res.arrayBuffer())

test('a range from three holders, a few pieces at a time, each kept; the whole after it needs only the rest; then held', async () => {
  const s = await setup({ holders: 3 })
  const start = PIECE_BYTES + 17
  const end = 4 * PIECE_BYTES + 5
  const res = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: s.name, range: { start, end }, loader: s.loader, cache: s.cache, via: s.via, listMs: 1000, listUrl: s.listUrl }))
  assert.equal(res.status, 206)
  assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${clip.length}`)
  assert.deepEqual(await bytesOf(res), clip.subarray(start, end + 1))
  assert.deepEqual(s.origin, [], 'the origin asked for nothing')
  assert.deepEqual(new Set(s.asked.map((a) => a.peer)), new Set(['h0', 'h1', 'h2']), 'every holder served')
  assert.ok(s.mostInFlight() > 1 && s.mostInFlight() <= PIECES_AHEAD + 1, `${s.mostInFlight()} pieces at once`)
  await s.loader.settled()
  const whole = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: s.name, range: null, loader: s.loader, cache: s.cache, via: s.via, listMs: 1000, listUrl: s.listUrl }))
  assert.equal(whole.status, 200)
  assert.equal(whole.headers.get('content-length'), String(clip.length))
  assert.deepEqual(await bytesOf(whole), clip)
  const pieces = s.asked.filter((a) => a.hash !== s.split.root).map((a) => a.hash)
  assert.equal(pieces.length, s.split.names.length, 'each piece asked once: the second time, those kept came from the store')
  await s.loader.settled()
  assert.equal(s.cache.has(s.name.hash), true, 'held (and announced) once every piece is')
})

test('pieces peers do not give come from the origin, a range of their own bytes, or cut out of the whole where it answers no ranges', async () => {
  for (const originRanges of [true, false]) {
    const s = await setup({ holders: 1, answersMs: 5, originRanges })
    // The holder gives its list, then nothing more.
    const peers = s.via.peers
    s.via.peers = async (url, part, how) => part.hash === s.split.root ? peers(url, part, how) : null
    const start = 2 * PIECE_BYTES - 3
    const res = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: s.name, range: { start, end: 2 * PIECE_BYTES + 3 }, loader: s.loader, cache: s.cache, via: s.via, listMs: 1000, listUrl: s.listUrl }))
    assert.deepEqual(await bytesOf(res), clip.subarray(start, 2 * PIECE_BYTES + 4))
    assert.deepEqual(s.origin.sort(), [`bytes=${PIECE_BYTES}-${2 * PIECE_BYTES - 1}`, `bytes=${2 * PIECE_BYTES}-${3 * PIECE_BYTES - 1}`])
    await s.loader.settled()
    assert.deepEqual(await s.cache.range(s.name.hash, start, 2 * PIECE_BYTES + 3), { bytes: clip.subarray(start, 2 * PIECE_BYTES + 4), type: 'video/mp4' }, 'kept, verified')
  }
})

test('no holder to give the piece list: the origin\'s; without it, no stream (the worker goes to the network as without maygh)', async () => {
  const s = await setup({ holders: 0 })
  listRequests.length = 0
  assert.equal(await pieceStream({ url: '/clip.mp4', name: s.name, range: { start: 0, end: 9 }, loader: s.loader, cache: s.cache, via: s.via, listMs: 200, listUrl: s.listUrl }), null)
  assert.deepEqual(s.origin, [])
  assert.deepEqual(listRequests, [`/${pieceListPath(s.split.root)}`])
  // The first visitor of a video nobody holds yet: the list and every piece from the origin, each
  // verified and kept; held (and so announced) once whole.
  beside.set(pieceListPath(s.split.root), s.split.list)
  const res = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: s.name, range: null, loader: s.loader, cache: s.cache, via: s.via, listMs: 200, listUrl: s.listUrl }))
  assert.deepEqual(await bytesOf(res), clip)
  assert.equal(s.origin.length, s.split.names.length, 'each piece, a range of its own')
  await s.loader.settled()
  assert.equal(s.cache.has(s.name.hash), true)
  // A list that is not the one named: none.
  const t = await setup({ holders: 0 })
  beside.set(pieceListPath(t.split.root), new Uint8Array(t.split.list.length))
  assert.equal(await pieceStream({ url: '/clip.mp4', name: t.name, range: { start: 0, end: 9 }, loader: t.loader, cache: t.cache, via: t.via, listMs: 200, listUrl: t.listUrl }), null)
})

test('nobody holds it: what the store lacks comes in one origin request from the first missing piece, passed on as it comes, each piece kept', async () => {
  for (const originRanges of [true, false]) {
    const s = await setup({ holders: 0, originRanges })
    beside.set(pieceListPath(s.split.root), s.split.list)
    // The store has the first two pieces already (an earlier view).
    await s.cache.beginPieces(s.name.hash, clip.length, 'video/mp4', s.split.root, s.split.list)
    for (const i of [1, 2]) await s.cache.putPiece(s.name.hash, i, s.split.pieces[i])
    const start = PIECE_BYTES + 5
    const res = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: s.name, range: { start, end: clip.length - 1 }, loader: s.loader, cache: s.cache, via: s.via, listMs: 200, listUrl: s.listUrl, held: async () => false }))
    assert.equal(res.status, 206)
    assert.deepEqual(await bytesOf(res), clip.subarray(start))
    assert.deepEqual(s.origin, [`bytes=${3 * PIECE_BYTES}-${clip.length - 1}`], 'one request, from the first piece the store lacked')
    assert.deepEqual(s.asked, [], 'no holder asked')
    // Each piece kept as it completed; the first one it never had stays missing.
    for (let i = 0; i < 50 && s.cache.meta.get(s.name.hash)?.have?.length !== s.split.names.length - 1; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepEqual([...(s.cache.meta.get(s.name.hash)?.have ?? [])].sort((a, b) => a - b), s.split.names.map((_, i) => i).slice(1))
  }
  // A seek into a piece nobody has: from the very byte asked for (no longer wait than without maygh);
  // that piece, begun partway, is not kept, the ones after it are.
  const t = await setup({ holders: 0 })
  beside.set(pieceListPath(t.split.root), t.split.list)
  const seek = 2 * PIECE_BYTES + 100
  const res = /** @type {Response} */ (await pieceStream({ url: '/clip.mp4', name: t.name, range: { start: seek, end: clip.length - 1 }, loader: t.loader, cache: t.cache, via: t.via, listMs: 200, listUrl: t.listUrl, held: async () => false }))
  assert.deepEqual(await bytesOf(res), clip.subarray(seek))
  assert.deepEqual(t.origin, [`bytes=${seek}-${clip.length - 1}`])
  await t.loader.settled()
  assert.deepEqual([...(t.cache.meta.get(t.name.hash)?.have ?? [])].sort((a, b) => a - b), t.split.names.map((_, i) => i).slice(3))
})
