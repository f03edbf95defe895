/**
 * The bytes the replay origin serves for a log's URL: deterministic from the
 * path, exactly the logged size, and of the URL's format — valid GIF, PNG
 * and JPEG images (image-bytes.js), a stylesheet or script that is one
 * comment, an SVG with a comment inside, and for everything else (media,
 * downloads, other image formats) pseudo-random bytes, which no layer can
 * compress. The pseudo-random stream is AES-128-CTR over zeros, keyed by
 * SHA-256 of the path: OpenSSL makes it faster than a JS loop could (on the
 * 2-vCPU test VM, 0.4–1.5 GB/s for 5 MB files and ~12–19 µs per 5 KB GIF,
 * bounded by touching fresh memory; the origin's startup, which also hashes
 * each asset for the manifest, ran at 120–160 MB/s).
 */
import { createCipheriv, createHash } from 'node:crypto'
import { MIN_IMAGE_BYTES, gifOfSize, jpegOfSize, pngOfSize } from './image-bytes.js'

/** Bytes per cipher call: large enough to amortize the call, small enough to stay in cache. */
const STEP = 256 * 1024
const ZEROS = Buffer.alloc(STEP)

/**
 * A function that fills buffers with the pseudo-random stream of `seed`,
 * continuing the stream from one call to the next.
 * @param {string} seed
 * @returns {(target: Buffer) => void}
 */
export function streamFiller (seed) {
  const key = createHash('sha256').update('maygh-replay\0').update(seed).digest()
  const cipher = createCipheriv('aes-128-ctr', key.subarray(0, 16), key.subarray(16))
  return (target) => {
    for (let at = 0; at < target.length; at += STEP) {
      const n = Math.min(STEP, target.length - at)
      cipher.update(ZEROS.subarray(0, n)).copy(target, at)
    }
  }
}

/**
 * `n` pseudo-random bytes of `seed`.
 * @param {string} seed
 * @param {number} n
 * @returns {Buffer}
 */
export function pseudoRandomBytes (seed, n) {
  const out = Buffer.allocUnsafe(n)
  streamFiller(seed)(out)
  return out
}

/**
 * Write `target.length` characters of base64 text from the stream of
 * `fill` (`A–Z a–z 0–9 + /`: no `*`, `-` or `>`, so it cannot close the
 * comment it pads).
 * @param {Buffer} target
 * @param {(target: Buffer) => void} fill
 */
function fillText (target, fill) {
  const raw = Buffer.allocUnsafe(Math.ceil(target.length * 3 / 4) + 3)
  fill(raw)
  target.write(raw.toString('base64'), 'latin1')
}

/**
 * `n` bytes of comment-safe text (see {@link fillText}) from the stream of `seed`.
 * @param {string} seed
 * @param {number} n
 * @returns {Buffer}
 */
export function fillerText (seed, n) {
  const out = Buffer.allocUnsafe(n)
  fillText(out, streamFiller(seed))
  return out
}

/**
 * A text file of exactly `size` bytes: `head`, then `open` + filler +
 * `close`, then `tail`; with too little room for the comment, spaces
 * instead of it.
 * @param {number} size at least head + tail
 * @param {{ head?: string, open: string, close: string, tail?: string }} parts ASCII
 * @param {(target: Buffer) => void} fill
 * @returns {Buffer}
 */
function textOfSize (size, { head = '', open, close, tail = '' }, fill) {
  const out = Buffer.allocUnsafe(size)
  const room = size - head.length - tail.length
  out.write(head, 0, 'latin1')
  out.write(tail, size - tail.length, 'latin1')
  const middle = out.subarray(head.length, head.length + room)
  if (room < open.length + close.length) {
    middle.fill(0x20)
  } else {
    middle.write(open, 0, 'latin1')
    middle.write(close, room - close.length, 'latin1')
    fillText(middle.subarray(open.length, room - close.length), fill)
  }
  return out
}

const SVG_HEAD = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1">'
const SVG_TAIL = '</svg>\n'

/** The smallest file made of each format ({@link MIN_IMAGE_BYTES}, and the SVG's frame); anything else can be 0 bytes. */
export const MIN_BYTES = Object.freeze({ ...MIN_IMAGE_BYTES, svg: SVG_HEAD.length + SVG_TAIL.length })

/**
 * The bytes of one URL, exactly `size` long unless the format's smallest
 * file is larger ({@link MIN_BYTES}: then that).
 * @param {string} path the URL path: the seed of its pseudo-random bytes
 * @param {number} size the logged size
 * @param {import('./asset-kinds.js').ByteFormat} format
 * @returns {Buffer}
 */
export function assetBytes (path, size, format) {
  if (!Number.isSafeInteger(size) || size < 0) throw new TypeError(`size of ${path} must be a non-negative integer, not ${size}`)
  const fill = streamFiller(path)
  switch (format) {
    case 'gif': return gifOfSize(size, fill)
    case 'png': return pngOfSize(size, fill)
    case 'jpeg': return jpegOfSize(size, fill)
    case 'svg': return textOfSize(Math.max(size, MIN_BYTES.svg), { head: SVG_HEAD, open: '<!--', close: '-->', tail: SVG_TAIL }, fill)
    case 'css':
    case 'js': return textOfSize(size, { open: '/*', close: '*/' }, fill)
    default: {
      const out = Buffer.allocUnsafe(size)
      fill(out)
      return out
    }
  }
}
