/**
 * A minimal PNG encoder (8-bit truecolour, no alpha) on node:zlib, because the
 * demo needs real, decodable product images and no image library is installed.
 * Rows use the Sub filter (see filterRows).
 */
import { crc32, deflateSync } from 'node:zlib'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * Encode an RGB raster as a PNG file.
 *
 * @param {number} width
 * @param {number} height
 * @param {Uint8Array} rgb width × height × 3 bytes, rows top to bottom
 * @param {{ level?: number }} [options] zlib compression level (default 6)
 * @returns {Buffer}
 */
export function encodePng (width, height, rgb, options = {}) {
  if (rgb.length !== width * height * 3) throw new RangeError('rgb must hold width × height × 3 bytes')
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type: truecolour
  // compression 0, filter method 0, interlace 0 are the zero bytes left in place
  const idat = deflateSync(filterRows(width, height, rgb), { level: options.level ?? 6 })
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))])
}

/**
 * Prefix each row with filter type 1 (Sub) and replace bytes by their difference
 * from the pixel to the left. Sub rather than Paeth: our pictures vary mostly
 * along x within a row, and Sub is a third of Paeth's cost in JS.
 *
 * @param {number} width
 * @param {number} height
 * @param {Uint8Array} rgb
 * @returns {Buffer}
 */
function filterRows (width, height, rgb) {
  const stride = width * 3
  const out = Buffer.alloc((stride + 1) * height)
  for (let y = 0; y < height; y++) {
    const row = y * stride
    const at = y * (stride + 1) + 1
    out[at - 1] = 1
    out[at] = rgb[row]
    out[at + 1] = rgb[row + 1]
    out[at + 2] = rgb[row + 2]
    for (let x = 3; x < stride; x++) out[at + x] = rgb[row + x] - rgb[row + x - 3]
  }
  return out
}

/**
 * One PNG chunk: length, type, data, CRC-32 over type and data.
 *
 * @param {string} type four ASCII letters
 * @param {Buffer} data
 * @returns {Buffer}
 */
function chunk (type, data) {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))) >>> 0, 0)
  return Buffer.concat([head, data, crc])
}

/**
 * Width and height from a PNG's IHDR (the first chunk), or undefined if `bytes` is not a PNG.
 *
 * @param {Uint8Array} bytes
 * @returns {{ width: number, height: number } | undefined}
 */
export function pngSize (bytes) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < 24 || !buf.subarray(0, 8).equals(PNG_SIGNATURE) || buf.toString('ascii', 12, 16) !== 'IHDR') return undefined
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) }
}
