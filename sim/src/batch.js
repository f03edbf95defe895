/**
 * Requests travel through the simulator in batches of parallel typed arrays:
 * times, client ids, object ids, bytes and flags. Parsers and the generator
 * fill them, the session window annotates them, engines replay them. Nothing
 * allocates per request.
 */

/** requests a batch holds */
export const BATCH_SIZE = 65536

/** flag: the request is for an asset Maygh may serve (a successful GET of a matching URL) */
export const FLAG_ASSET = 1
/** flag: the same client's next request comes within the session gap (set by the session window) */
export const FLAG_CONT = 2
/** flag: the request is a page view (a navigation: a GET of a page, static-assets.js `isPageUrl`, answered 200 or 304) */
export const FLAG_PAGE = 4
/** flag: the asset is audio or video (static-assets.js `isMediaUrl`), which a browser asks for with `Range` */
export const FLAG_MEDIA = 8
/** flag: the asset blocks rendering (a style, a script, a font: static-assets.js `isBlockingUrl`, `isBlockingContentType`), which the hedge rule races */
export const FLAG_BLOCKING = 16

/** One batch of requests, in time order. */
export class RequestBatch {
  /** @param {number} [capacity] */
  constructor (capacity = BATCH_SIZE) {
    this.capacity = capacity
    /** requests filled */
    this.n = 0
    // Typed over any buffer: a batch may be a view of shared memory (batch-ring.js).
    /** @type {Float64Array} seconds since the Unix epoch */
    this.ts = new Float64Array(capacity)
    /** @type {Int32Array} */
    this.client = new Int32Array(capacity)
    /** @type {Int32Array} */
    this.object = new Int32Array(capacity)
    /** @type {Float64Array} bytes the log says the origin sent */
    this.bytes = new Float64Array(capacity)
    /** @type {Uint8Array} */
    this.flags = new Uint8Array(capacity)
  }

  /**
   * Appends one request; the caller checks {@link RequestBatch#full} first.
   * @param {number} ts
   * @param {number} client
   * @param {number} object
   * @param {number} bytes
   * @param {number} flags
   */
  push (ts, client, object, bytes, flags) {
    const i = this.n++
    this.ts[i] = ts
    this.client[i] = client
    this.object[i] = object
    this.bytes[i] = bytes
    this.flags[i] = flags
  }

  /** @returns {boolean} */
  full () {
    return this.n === this.capacity
  }

  /**
   * Makes room for `capacity` requests, keeping those held (the sorter's
   * columns grow this way up to a run).
   * @param {number} capacity
   */
  grow (capacity) {
    this.ts = growTo(this.ts, capacity)
    this.client = growTo(this.client, capacity)
    this.object = growTo(this.object, capacity)
    this.bytes = growTo(this.bytes, capacity)
    this.flags = growTo(this.flags, capacity)
    this.capacity = capacity
  }
}

/**
 * A typed array at least `min` long holding `arr`'s contents (doubling growth).
 * @template {Float64Array | Int32Array | Uint8Array | Uint32Array} A
 * @param {A} arr
 * @param {number} min
 * @param {number} [fill] value for the new tail
 * @returns {A}
 */
export function growTo (arr, min, fill = 0) {
  if (arr.length >= min) return arr
  let len = Math.max(16, arr.length)
  while (len < min) len *= 2
  const next = /** @type {A} */ (new /** @type {any} */ (arr.constructor)(len))
  next.set(arr)
  if (fill !== 0) next.fill(fill, arr.length)
  return next
}
