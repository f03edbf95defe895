/**
 * Valid images of an exact byte size: a 1×1 GIF, a 1-pixel-high PNG and a
 * 1×1 baseline JPEG, each grown to the size a log gives with pseudo-random
 * bytes in the place its format sets aside for data a decoder skips (a GIF
 * comment extension, a private ancillary PNG chunk, JPEG COM segments). A
 * size below the format's smallest file gets the smallest file
 * ({@link MIN_IMAGE_BYTES}): a log's 0- to 136-byte images are rare (partial
 * responses, mostly) and a browser must still decode what it is sent.
 */
import { crc32 } from 'node:zlib'

/** The smallest file each format can be made at; any size from it upward is exact. */
export const MIN_IMAGE_BYTES = Object.freeze({ gif: 35, png: 70, jpeg: 137 })

/** @typedef {(target: Buffer) => void} Fill writes pseudo-random bytes over all of `target` */

// GIF89a: header, logical screen 1×1 with a 2-colour global table (black, white).
const GIF_HEAD = Buffer.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255])
// Image descriptor: at (0,0), 1×1, no local table.
const GIF_IMAGE = Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0])
// LZW data with minimum code size 2 (3-bit codes; 4 = clear, 5 = end): clear, pixel 0, end, in one
// 2-byte sub-block; the same in two 1-byte sub-blocks (+1); four clears, pixel 0, end (3 bytes) as
// sub-blocks of 2 and 1 (+2). Repeated clear codes are legal and every decoder resets on each.
const LZW_SHORT = packLzw([4, 0, 5], 3)
const LZW_LONG = packLzw([4, 4, 4, 4, 0, 5], 3)
const GIF_PIXELS = [
  Buffer.from([2, 2, LZW_SHORT[0], LZW_SHORT[1], 0]),
  Buffer.from([2, 1, LZW_SHORT[0], 1, LZW_SHORT[1], 0]),
  Buffer.from([2, 2, LZW_LONG[0], LZW_LONG[1], 1, LZW_LONG[2], 0])
]
const GIF_TRAILER = Buffer.from([0x3b])

/**
 * Pack LZW codes of one width, least significant bit first, as GIF does.
 * @param {number[]} codes
 * @param {number} width bits per code
 * @returns {Buffer}
 */
function packLzw (codes, width) {
  const out = Buffer.alloc(Math.ceil(codes.length * width / 8))
  let bit = 0
  for (const code of codes) {
    for (let i = 0; i < width; i++, bit++) if (code & (1 << i)) out[bit >> 3] |= 1 << (bit & 7)
  }
  return out
}

/**
 * A 1×1 GIF of exactly `size` bytes (at least {@link MIN_IMAGE_BYTES}.gif).
 * Growth: a comment extension (3 bytes, or 5 and more: its data in
 * sub-blocks of up to 255 bytes, each after a length byte) plus 0–2 bytes
 * from how the pixel's LZW data is cut into sub-blocks.
 * @param {number} size
 * @param {Fill} fill
 * @returns {Buffer}
 */
export function gifOfSize (size, fill) {
  const grow = Math.max(0, size - MIN_IMAGE_BYTES.gif)
  const lzwExtra = grow <= 2 ? grow : grow === 4 ? 1 : 0
  const commentBytes = grow - lzwExtra
  const out = Buffer.allocUnsafe(MIN_IMAGE_BYTES.gif + grow)
  let at = GIF_HEAD.copy(out, 0)
  gifComment(out.subarray(at, at + commentBytes), fill)
  at += commentBytes
  for (const part of [GIF_IMAGE, GIF_PIXELS[lzwExtra], GIF_TRAILER]) at += part.copy(out, at)
  return out
}

/**
 * Write a comment extension over all of `out` (0, 3, or 5 and more bytes).
 * @param {Buffer} out
 * @param {Fill} fill
 */
function gifComment (out, fill) {
  const n = out.length
  if (n === 0) return
  fill(out)
  out[0] = 0x21
  out[1] = 0xfe
  let blocks = Math.ceil((n - 3) / 256)
  let data = n - 3 - blocks
  let at = 2
  for (; blocks > 0; blocks--) {
    const len = Math.min(255, data - (blocks - 1))
    out[at] = len
    at += 1 + len
    data -= len
  }
  out[at] = 0 // block terminator
  if (at !== n - 1) throw new Error(`GIF comment layout is off: ${at} != ${n - 1}`)
}

/**
 * Frame a PNG chunk whose data is already in place: `out` is the whole
 * chunk (length, type, data, CRC-32 over type and data).
 * @param {Buffer} out
 * @param {string} type
 * @returns {Buffer} out
 */
function frameChunk (out, type) {
  const length = out.length - 12
  out.writeUInt32BE(length, 0)
  out.write(type, 4, 'latin1')
  out.writeUInt32BE(crc32(out.subarray(4, 8 + length)) >>> 0, 8 + length)
  return out
}

/**
 * One PNG chunk of a few bytes.
 * @param {string} type
 * @param {Buffer} data
 * @returns {Buffer}
 */
function pngChunk (type, data) {
  const out = Buffer.alloc(12 + data.length)
  data.copy(out, 8)
  return frameChunk(out, type)
}

/**
 * Adler-32 (zlib's trailer) of a few bytes.
 * @param {Uint8Array} bytes
 * @returns {number}
 */
function adler32 (bytes) {
  let a = 1
  let b = 0
  for (const byte of bytes) {
    a = (a + byte) % 65521
    b = (b + a) % 65521
  }
  return ((b << 16) | a) >>> 0
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Private, ancillary, safe-to-copy chunk type of the padding: decoders skip it. */
const PNG_PAD_TYPE = 'maYg'

/**
 * A grey PNG one pixel high, of exactly `size` bytes (at least
 * {@link MIN_IMAGE_BYTES}.png). Its pixels are one stored (uncompressed)
 * deflate block, so each pixel of width is one byte: the first 11 bytes of
 * growth widen the image, more go to one `maYg` chunk of pseudo-random
 * bytes (12 bytes of frame, then data).
 * @param {number} size
 * @param {Fill} fill
 * @returns {Buffer}
 */
export function pngOfSize (size, fill) {
  const grow = Math.max(0, size - MIN_IMAGE_BYTES.png)
  const width = grow < 12 ? 1 + grow : 1
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(1, 4)
  ihdr[8] = 8 // bit depth; colour type 0 (grey), compression, filter, interlace: the zeros left
  const row = Buffer.alloc(1 + width, 0x80)
  row[0] = 0 // filter: none
  const zlib = Buffer.alloc(2 + 5 + row.length + 4)
  zlib[0] = 0x78 // deflate, 32 KiB window
  zlib[1] = 0x01 // no preset dictionary, check bits
  zlib[2] = 0x01 // final block, stored
  zlib.writeUInt16LE(row.length, 3)
  zlib.writeUInt16LE(~row.length & 0xffff, 5)
  row.copy(zlib, 7)
  zlib.writeUInt32BE(adler32(row), 7 + row.length)
  const out = Buffer.allocUnsafe(MIN_IMAGE_BYTES.png + grow)
  let at = 0
  for (const part of [PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', zlib)]) at += part.copy(out, at)
  if (grow >= 12) {
    const chunk = out.subarray(at, at + grow)
    fill(chunk.subarray(8, grow - 4))
    at += frameChunk(chunk, PNG_PAD_TYPE).length
  }
  pngChunk('IEND', Buffer.alloc(0)).copy(out, at)
  return out
}

// Baseline JPEG, 1×1 grey: quantization table 0 of all ones; DC and AC Huffman tables with one
// 1-bit code each (DC category 0, AC end-of-block); one block coded as bits 0, 0 padded with ones.
const JPEG_SOI = Buffer.from([0xff, 0xd8])
const JPEG_REST = Buffer.from([
  0xff, 0xdb, 0x00, 0x43, 0x00, ...new Array(64).fill(1),
  0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00,
  0xff, 0xc4, 0x00, 0x26,
  0x00, 1, ...new Array(15).fill(0), 0x00,
  0x10, 1, ...new Array(15).fill(0), 0x00,
  0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00,
  0x3f,
  0xff, 0xd9
])
/** Largest COM segment: marker, 2-byte length (counting itself) up to 65535. */
const JPEG_MAX_COM = 2 + 65535

/**
 * A 1×1 JPEG of exactly `size` bytes (at least {@link MIN_IMAGE_BYTES}.jpeg).
 * Growth after the SOI marker: COM segments of pseudo-random bytes (4 bytes
 * of frame each, up to 65537 bytes), or for 1–3 bytes, 0xFF fill bytes,
 * which the standard allows before any marker (ITU T.81 B.1.1.2).
 * @param {number} size
 * @param {Fill} fill
 * @returns {Buffer}
 */
export function jpegOfSize (size, fill) {
  let grow = Math.max(0, size - MIN_IMAGE_BYTES.jpeg)
  const out = Buffer.allocUnsafe(MIN_IMAGE_BYTES.jpeg + grow)
  JPEG_SOI.copy(out, 0)
  JPEG_REST.copy(out, 2 + grow)
  const pad = out.subarray(2, 2 + grow)
  if (grow < 4) {
    pad.fill(0xff)
    return out
  }
  fill(pad)
  for (let at = 0; grow > 0;) {
    let len = Math.min(grow, JPEG_MAX_COM)
    if (grow - len > 0 && grow - len < 4) len -= 4 // leave room for one more whole segment
    pad[at] = 0xff
    pad[at + 1] = 0xfe
    pad.writeUInt16BE(len - 2, at + 2)
    at += len
    grow -= len
  }
  return out
}
