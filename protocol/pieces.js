/**
 * Large assets in pieces (docs/protocol.md, "Pieces"): an asset above
 * PIECED_ABOVE bytes is also named, in the manifest, by the SHA-256 of its
 * piece list (`pieces`): the 32-byte SHA-256 digests of its PIECE_BYTES
 * pieces, the last one shorter, one after the other. A piece's own name is
 * the SRI name of its bytes, so a peer serves a piece, or the list, to a
 * `get` for that name exactly as it serves a whole asset, and the receiver
 * verifies it as it verifies any reply: every piece on arrival.
 *
 * A flat list rather than a Merkle tree (BitTorrent v2): at 1 MiB a piece,
 * the list of a 50 MB video is 1.6 KB, fetched once from any holder and
 * verified against the manifest's root; a tree would add a proof to every
 * piece for a saving no receiver needs at this size.
 */
import { digestName, sriOf } from './sri.js'

/** The folder beside the manifest that holds the piece lists, for a client no holder gives one. */
export const PIECE_LISTS_DIR = 'maygh-pieces'

/**
 * Where a piece list is beside the manifest: PIECE_LISTS_DIR/ its SHA-256 in base64url.
 * @param {string} name the list's SRI name
 * @returns {string} a relative path
 */
export const pieceListPath = (name) => `${PIECE_LISTS_DIR}/${name.slice(7).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`

/** Bytes in a piece (the last one of an asset may be shorter). */
export const PIECE_BYTES = 1 << 20

/** Assets larger than this are named in pieces as well as whole. */
export const PIECED_ABOVE = 4 << 20

/**
 * @param {number} size an asset's bytes
 * @returns {number} its pieces
 */
export const pieceCount = (size) => Math.ceil(size / PIECE_BYTES)

/**
 * The piece list of some bytes: each piece's SHA-256 digest, in order.
 * @param {Uint8Array} bytes
 * @returns {Promise<Uint8Array<ArrayBuffer>>} 32 bytes a piece
 */
export async function pieceList (bytes) {
  const n = pieceCount(bytes.length)
  const list = new Uint8Array(32 * n)
  const digests = await Promise.all(Array.from({ length: n }, (_, i) =>
    crypto.subtle.digest('SHA-256', /** @type {BufferSource} */ (bytes.subarray(i * PIECE_BYTES, (i + 1) * PIECE_BYTES)))))
  digests.forEach((d, i) => list.set(new Uint8Array(d), 32 * i))
  return list
}

/**
 * The names of the pieces a list lists, in order.
 * @param {Uint8Array} list a piece list
 * @returns {string[]}
 */
export function pieceNames (list) {
  const names = []
  for (let at = 0; at + 32 <= list.length; at += 32) names.push(digestName(list.subarray(at, at + 32)))
  return names
}

/**
 * An asset's pieces as the store keeps them: its list's name (the manifest's
 * `pieces`), the list, and each piece's name and bytes.
 * @param {Uint8Array<ArrayBuffer>} bytes
 * @returns {Promise<{ root: string, list: Uint8Array<ArrayBuffer>, names: string[], pieces: Uint8Array<ArrayBuffer>[] }>}
 */
export async function splitPieces (bytes) {
  const list = await pieceList(bytes)
  const names = pieceNames(list)
  return { root: await sriOf(list), list, names, pieces: names.map((_, i) => bytes.subarray(i * PIECE_BYTES, (i + 1) * PIECE_BYTES)) }
}

/**
 * Which pieces hold bytes `start` to `end` (inclusive), as a range request names them.
 * @param {number} start
 * @param {number} end
 * @returns {{ first: number, last: number }}
 */
export const piecesOf = (start, end) => ({ first: Math.floor(start / PIECE_BYTES), last: Math.floor(end / PIECE_BYTES) })
