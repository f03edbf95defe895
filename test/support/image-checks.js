/**
 * Structure checks of generated images, for the tests of the demo shop's
 * art and the crowd's replay origin: a GIF walked block by block with its LZW data decoded, a PNG's chunks and
 * CRCs with its pixels inflated, a JPEG's markers and segments. Plain
 * parsers, independent of the code that writes the images.
 */
import assert from 'node:assert/strict'
import { crc32, inflateSync } from 'node:zlib'

/**
 * Walk GIF sub-blocks from `at`.
 * @param {Buffer} b
 * @param {number} at
 * @returns {{ at: number, data: Buffer }} past the terminator, and the blocks' data joined
 */
function subBlocks (b, at) {
  const parts = []
  for (let len = b[at++]; len !== 0; len = b[at++]) {
    assert.ok(at + len <= b.length, 'sub-block inside the file')
    parts.push(b.subarray(at, at + len))
    at += len
  }
  return { at, data: Buffer.concat(parts) }
}

/**
 * How many pixels a GIF image's LZW data decodes to (a plain LZW decoder, checking every code).
 * @param {Buffer} data
 * @param {number} minSize
 * @returns {number}
 */
function lzwPixels (data, minSize) {
  const clear = 1 << minSize
  let size = minSize + 1
  let next = clear + 2
  /** @type {number[][]} */
  let table = []
  const reset = () => { table = Array.from({ length: clear }, (_, i) => [i]); size = minSize + 1; next = clear + 2 }
  reset()
  let prev = null
  let pixels = 0
  for (let bit = 0; bit + size <= data.length * 8;) {
    let code = 0
    for (let i = 0; i < size; i++, bit++) if (data[bit >> 3] & (1 << (bit & 7))) code |= 1 << i
    if (code === clear) { reset(); prev = null; continue }
    if (code === clear + 1) return pixels
    assert.ok(code < next, `LZW code ${code} is in the table`)
    const entry = table[code] ?? (prev && [...prev, prev[0]])
    assert.ok(entry)
    pixels += entry.length
    if (prev) { table[next++] = [...prev, entry[0]]; if (next === 1 << size && size < 12) size++ }
    prev = entry
  }
  assert.fail('no end-of-information code')
}

/**
 * Check a GIF's whole structure: header, global table, extensions, image, LZW data, trailer at the end.
 * @param {Buffer} b
 */
export function checkGif (b) {
  assert.equal(b.toString('latin1', 0, 6), 'GIF89a')
  const [width, height, packed] = [b.readUInt16LE(6), b.readUInt16LE(8), b[10]]
  let at = 13 + (packed & 0x80 ? 3 * (2 << (packed & 7)) : 0)
  let images = 0
  for (;;) {
    const intro = b[at++]
    if (intro === 0x3b) break
    if (intro === 0x21) {
      at = subBlocks(b, at + 1).at
    } else if (intro === 0x2c) {
      const p = b[at + 8]
      assert.deepEqual([b.readUInt16LE(at + 4), b.readUInt16LE(at + 6)], [width, height])
      at += 9 + (p & 0x80 ? 3 * (2 << (p & 7)) : 0)
      const min = b[at++]
      const image = subBlocks(b, at)
      assert.equal(lzwPixels(image.data, min), width * height)
      at = image.at
      images++
    } else {
      assert.fail(`unexpected GIF block 0x${intro?.toString(16)} at ${at - 1}`)
    }
  }
  assert.equal(images, 1)
  assert.equal(at, b.length, 'trailer is the last byte')
}

/** PNG colour types this checks, by their channels per pixel (grey, RGB, grey + alpha, RGBA) */
const PNG_CHANNELS = /** @type {Record<number, number>} */ ({ 0: 1, 2: 3, 4: 2, 6: 4 })

/**
 * Check a PNG: signature, every chunk's CRC, IHDR first, IEND last, no unknown
 * critical chunk, 8-bit samples without interlace, IDAT inflating to the rows' size.
 * @param {Buffer} b
 * @returns {{ width: number, height: number, colorType: number }}
 */
export function checkPng (b) {
  assert.deepEqual([...b.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const chunks = []
  for (let at = 8; at < b.length;) {
    const length = b.readUInt32BE(at)
    const type = b.toString('latin1', at + 4, at + 8)
    assert.equal(b.readUInt32BE(at + 8 + length), crc32(b.subarray(at + 4, at + 8 + length)) >>> 0, `${type} CRC`)
    chunks.push({ type, data: b.subarray(at + 8, at + 8 + length) })
    at += 12 + length
  }
  assert.equal(chunks[0].type, 'IHDR')
  assert.equal(chunks.at(-1)?.type, 'IEND')
  for (const c of chunks) assert.ok(/^[A-Z]/.test(c.type) ? ['IHDR', 'IDAT', 'IEND'].includes(c.type) : true, 'only known critical chunks')
  const ihdr = chunks[0].data
  const [width, height, colorType] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[9]]
  const channels = PNG_CHANNELS[colorType]
  assert.ok(channels, `colour type ${colorType}`)
  assert.deepEqual([ihdr[8], ...ihdr.subarray(10)], [8, 0, 0, 0], '8-bit samples, no interlace')
  assert.equal(inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data))).length, height * (1 + width * channels))
  return { width, height, colorType }
}

/**
 * Check a JPEG's marker structure: SOI, length-framed segments (fill bytes allowed), SOF0, DHT, DQT, one scan, EOI last.
 * @param {Buffer} b
 */
export function checkJpeg (b) {
  assert.deepEqual([...b.subarray(0, 2)], [0xff, 0xd8])
  const seen = new Set()
  let at = 2
  for (;;) {
    assert.equal(b[at], 0xff, `marker at ${at}`)
    while (b[at + 1] === 0xff) at++
    const marker = b[at + 1]
    at += 2
    if (marker === 0xd9) break
    const len = b.readUInt16BE(at)
    seen.add(marker)
    if (marker === 0xc0) assert.deepEqual([b.readUInt16BE(at + 3), b.readUInt16BE(at + 5)], [1, 1], '1×1')
    at += len
    if (marker === 0xda) {
      while (!(b[at] === 0xff && b[at + 1] !== 0 && !(b[at + 1] >= 0xd0 && b[at + 1] <= 0xd7))) at++
    }
  }
  assert.equal(at, b.length, 'EOI is the end')
  for (const m of [0xc0, 0xc4, 0xdb, 0xda]) assert.ok(seen.has(m), `segment 0x${m.toString(16)}`)
}
