/**
 * Pieces: the list the client computes with WebCrypto is the one the
 * manifest tool names (Node's hash, synchronously); piece names name the
 * pieces' bytes; a range maps onto the pieces that hold it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { PIECE_BYTES, PIECED_ABOVE, matches, pieceCount, pieceList, pieceNames, piecesOf, splitPieces, sriOf } from '../index.js'
import { piecesRoot } from '../../client/manifest.js'

test('an asset split in pieces: each named by its bytes, the list named as the manifest names it', async () => {
  const bytes = new Uint8Array(randomBytes(3 * PIECE_BYTES + 12345))
  const { root, list, names, pieces } = await splitPieces(bytes)
  assert.equal(pieceCount(bytes.length), 4)
  assert.equal(list.length, 4 * 32)
  assert.equal(names.length, 4)
  assert.deepEqual(pieces.map((p) => p.length), [PIECE_BYTES, PIECE_BYTES, PIECE_BYTES, 12345])
  for (let i = 0; i < 4; i++) assert.ok(await matches(pieces[i], names[i]), `piece ${i}`)
  assert.equal(root, await sriOf(list))
  assert.equal(root, piecesRoot(bytes))
  assert.deepEqual(pieceNames(await pieceList(bytes)), names)
  // One piece's worth exactly: one piece.
  assert.equal(pieceCount(PIECE_BYTES), 1)
  assert.equal(pieceCount(0), 0)
  assert.ok(PIECED_ABOVE > PIECE_BYTES)
})

test('a byte range maps onto the pieces that hold it', () => {
  assert.deepEqual(piecesOf(0, 0), { first: 0, last: 0 })
  assert.deepEqual(piecesOf(0, PIECE_BYTES - 1), { first: 0, last: 0 })
  assert.deepEqual(piecesOf(PIECE_BYTES - 1, PIECE_BYTES), { first: 0, last: 1 })
  assert.deepEqual(piecesOf(5 * PIECE_BYTES + 7, 9 * PIECE_BYTES), { first: 5, last: 9 })
})
