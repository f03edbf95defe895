/**
 * The cache's pieced assets (protocol/pieces.js), on fake-indexeddb: an asset
 * named with `pieces` is kept in parts, each readable and verified alone (what
 * a peer asks for, what a range request needs), whole as its parts one after
 * the other; a bad part costs the asset; a part two assets share outlives one
 * of them. The IndexedDB behaviour itself is checked in real Chromium
 * (cache.browser.test.js).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { IDBFactory } from 'fake-indexeddb'
import { Cache } from '../src/cache.js'
import { Transfer } from '../src/transfer.js'
import { channelPair } from './fake-channel.js'
import { PIECE_BYTES, PIECED_ABOVE, matches, pieceNames, splitPieces, sriOf } from '../../protocol/index.js'

const video = new Uint8Array(randomBytes(PIECED_ABOVE + 3 * PIECE_BYTES + 777))

/** @param {IDBFactory} [indexedDB] */
const open = (indexedDB = new IDBFactory(), quotaBytes = 64 << 20) => new Cache({ quotaBytes, indexedDB }).open()

test('a pieced asset: whole, each part by its name, any range from the pieces under it', async () => {
  const hash = await sriOf(video)
  const { root, list, names } = await splitPieces(video)
  const cache = await open()
  assert.equal(await cache.put(hash, video, 'video/mp4', root), true)
  assert.deepEqual(cache.hashes(), [hash], 'announced whole, not by its parts')
  assert.deepEqual(await cache.get(hash), { bytes: video, type: 'video/mp4' })
  assert.deepEqual(await cache.get(root), { bytes: list, type: '' }, 'its piece list, by its name')
  assert.deepEqual(await cache.get(names[2]), { bytes: video.subarray(2 * PIECE_BYTES, 3 * PIECE_BYTES), type: '' })
  for (const [start, end] of [[0, 0], [0, 99], [PIECE_BYTES - 10, PIECE_BYTES + 10], [5 * PIECE_BYTES, video.length - 1], [123, video.length - 1]]) {
    const got = await cache.range(hash, start, end)
    assert.deepEqual(got, { bytes: video.subarray(start, end + 1), type: 'video/mp4' }, `${start}-${end}`)
  }
  const request = (/** @type {IDBRequest} */ r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
  assert.equal(await request(cache.store('data', 'readonly').count()), 1 + names.length, 'the list and each piece; no whole copy')
})

test('a small asset reads its range from its one record; an asset whose manifest lists other pieces is kept whole', async () => {
  const cache = await open()
  const small = new Uint8Array(randomBytes(5000))
  const hash = await sriOf(small)
  await cache.put(hash, small, 'image/png', undefined)
  assert.deepEqual(await cache.range(hash, 10, 19), { bytes: small.subarray(10, 20), type: 'image/png' })
  const big = await sriOf(video)
  await cache.put(big, video, 'video/mp4', await sriOf(new Uint8Array(1)))
  assert.equal(cache.parts.size, 0, 'a stale pieces name: not split')
  assert.deepEqual(await cache.get(big), { bytes: video, type: 'video/mp4' })
})

test('a bad piece costs its asset, which is deleted and reported; a piece another asset shares stays', async () => {
  const factory = new IDBFactory()
  /** @type {string[]} */
  const corrupt = []
  const cache = await new Cache({ quotaBytes: 64 << 20, indexedDB: factory, onCorrupt: (h) => corrupt.push(h) }).open()
  // Two assets with the same first pieces.
  const other = new Uint8Array(video)
  other[other.length - 1] ^= 1
  const [a, b] = [await sriOf(video), await sriOf(other)]
  const [sa, sb] = [await splitPieces(video), await splitPieces(other)]
  await cache.put(a, video, 'video/mp4', sa.root)
  await cache.put(b, other, 'video/mp4', sb.root)
  await cache.delete(a)
  assert.deepEqual(await cache.get(b), { bytes: other, type: 'video/mp4' }, 'its shared pieces outlived a')
  assert.equal(await cache.get(sa.names.at(-1) ?? ''), null, 'a\'s own last piece went with it')
  // Reopened: the index says which parts are whose.
  const again = await new Cache({ quotaBytes: 64 << 20, indexedDB: factory, onCorrupt: (h) => corrupt.push(h) }).open()
  assert.deepEqual(await again.get(sb.names[1]), { bytes: other.subarray(PIECE_BYTES, 2 * PIECE_BYTES), type: '' })
  const request = (/** @type {IDBRequest} */ r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
  const rec = /** @type {any} */ (await request(again.store('data', 'readonly').get(sb.names[3])))
  rec.bytes[0] ^= 1
  await request(again.store('data', 'readwrite').put(rec))
  assert.equal(await again.range(b, 3 * PIECE_BYTES, 3 * PIECE_BYTES + 5), null)
  assert.deepEqual(corrupt, [b])
  assert.equal(again.has(b), false)
  assert.equal(await request(again.store('data', 'readonly').count()), 0, 'every part of it deleted')
})

test('a holder serves its piece list and any piece to a get for its name, as it serves whole assets (no new message)', async () => {
  const cache = await open()
  const hash = await sriOf(video)
  const { root, list, names } = await splitPieces(video)
  await cache.put(hash, video, 'video/mp4', root)
  const [ca, cb] = channelPair()
  const holder = new Transfer(/** @type {any} */ (ca), { serve: (h) => cache.get(h) })
  const receiver = new Transfer(/** @type {any} */ (cb), { serve: async () => null })
  const got = await receiver.request(root)
  assert.deepEqual(got.bytes, list)
  assert.deepEqual(pieceNames(got.bytes), names)
  const piece = await receiver.request(names[4])
  assert.ok(await matches(piece.bytes, names[4]))
  assert.deepEqual(piece.bytes, video.subarray(4 * PIECE_BYTES, 5 * PIECE_BYTES))
  await assert.rejects(receiver.request(await sriOf(new Uint8Array(3))), { code: 'MGH_ERR_MISS' })
  assert.equal(holder.open, true)
})

test('an asset kept in part: its pieces served as they come, the asset held (and announced) once it has them all', async () => {
  const factory = new IDBFactory()
  /** @type {unknown[]} */
  const changes = []
  const opened = () => new Cache({ quotaBytes: 64 << 20, indexedDB: factory, onChange: (c) => changes.push(c) }).open()
  const cache = await opened()
  const hash = await sriOf(video)
  const { root, list, names, pieces } = await splitPieces(video)
  assert.equal(await cache.beginPieces(hash, video.length, 'video/mp4', root, list), true)
  await cache.putPiece(hash, 2, pieces[2])
  await cache.putPiece(hash, 3, pieces[3])
  assert.equal(cache.has(hash), false)
  assert.deepEqual(cache.hashes(), [], 'not announced')
  assert.equal(await cache.get(hash), null, 'not whole')
  assert.deepEqual(await cache.get(names[3]), { bytes: pieces[3], type: '' })
  assert.deepEqual(await cache.get(root), { bytes: list, type: '' })
  assert.equal(await cache.get(names[0]), null, 'a piece it does not have')
  const start = 2 * PIECE_BYTES + 5
  assert.deepEqual(await cache.range(hash, start, 4 * PIECE_BYTES - 1), { bytes: video.subarray(start, 4 * PIECE_BYTES), type: 'video/mp4' })
  assert.equal(await cache.range(hash, start, 4 * PIECE_BYTES), null, 'a range over a piece it does not have')
  assert.equal(cache.bytes, 2 * PIECE_BYTES, 'counted: the pieces it has')
  // Reopened: what it had, it has.
  const again = await opened()
  assert.deepEqual(await again.get(names[2]), { bytes: pieces[2], type: '' })
  assert.equal(again.bytes, 2 * PIECE_BYTES)
  for (let i = 0; i < names.length; i++) await again.putPiece(hash, i, pieces[i])
  assert.equal(again.has(hash), true)
  assert.deepEqual(again.hashes(), [hash])
  assert.deepEqual(changes, [{ add: [hash] }], 'announced once, when whole')
  assert.deepEqual(await again.get(hash), { bytes: video, type: 'video/mp4' })
  assert.equal(again.bytes, video.length)
  assert.deepEqual(await (await opened()).get(hash), { bytes: video, type: 'video/mp4' }, 'whole after a reopen too')
})

test('an asset kept in part is evicted as any other, by what it takes, and said to nobody: it was never announced', async () => {
  /** @type {{ add?: string[], remove?: string[] }[]} */
  const changes = []
  const cache = await new Cache({ quotaBytes: 3 * PIECE_BYTES, indexedDB: new IDBFactory(), onChange: (c) => changes.push(c) }).open()
  const hash = await sriOf(video)
  const { root, list, pieces } = await splitPieces(video)
  await cache.beginPieces(hash, video.length, 'video/mp4', root, list)
  for (const i of [0, 1, 2]) await cache.putPiece(hash, i, pieces[i])
  const small = new Uint8Array(randomBytes(PIECE_BYTES))
  await cache.put(await sriOf(small), small, 'image/png')
  assert.equal(cache.meta.has(hash), false, 'the partial asset, least recently used, made room')
  assert.deepEqual(changes, [{ add: [await sriOf(small)] }])
  // Kept whole once loaded whole (from the origin, say).
  /** @type {unknown[]} */
  const told = []
  const roomy = await new Cache({ quotaBytes: 64 << 20, indexedDB: new IDBFactory(), onChange: (c) => told.push(c) }).open()
  await roomy.beginPieces(hash, video.length, 'video/mp4', root, list)
  await roomy.putPiece(hash, 0, pieces[0])
  await roomy.put(hash, video, 'video/mp4', root)
  assert.equal(roomy.has(hash), true)
  assert.deepEqual(told, [{ add: [hash] }])
  assert.equal(roomy.bytes, video.length)
  assert.deepEqual(await roomy.range(hash, 0, video.length - 1), { bytes: video, type: 'video/mp4' })
})
