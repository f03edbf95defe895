/**
 * The on-disk half of `--sort`: runs of requests, each already sorted by
 * time, written to files of fixed-size binary records, then merged k ways
 * (a binary heap keyed by time, then run number) back into batches. Runs hold
 * consecutive stretches of the file, so breaking ties by run number keeps the
 * merge stable: requests of the same time come out in file order.
 */
import { open } from 'node:fs/promises'
import { RequestBatch } from '../batch.js'
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** bytes of one record: ts f64, client i32, object i32, bytes f64, flags u8 */
export const RECORD_BYTES = 25
/** records read or written at a time, per run (400 KB) */
const BLOCK = 16384

/**
 * @typedef {object} Columns requests held in memory, by field
 * @property {Float64Array} ts
 * @property {Int32Array} client
 * @property {Int32Array} object
 * @property {Float64Array} bytes
 * @property {Uint8Array} flags
 */

/**
 * Re-throws a file-system failure as MGH_SIM_ERR_SORT.
 * @param {string} path
 * @param {unknown} err
 * @returns {never}
 */
export function sortFailed (path, err) {
  if (err instanceof MayghError) throw err
  throw new MayghError(ERRORS.MGH_SIM_ERR_SORT, `${path}: ${/** @type {Error} */ (err).message}`, { cause: err })
}

/**
 * Writes `cols` in the order of `order[0 … n)` to a new file.
 * @param {string} path
 * @param {Columns} cols
 * @param {Uint32Array} order
 * @param {number} n
 */
export async function writeRun (path, cols, order, n) {
  const buf = Buffer.allocUnsafe(BLOCK * RECORD_BYTES)
  let fh
  try {
    fh = await open(path, 'wx')
    for (let at = 0; at < n; at += BLOCK) {
      const end = Math.min(n, at + BLOCK)
      let p = 0
      for (let k = at; k < end; k++) {
        const i = order[k]
        buf.writeDoubleLE(cols.ts[i], p)
        buf.writeInt32LE(cols.client[i], p + 8)
        buf.writeInt32LE(cols.object[i], p + 12)
        buf.writeDoubleLE(cols.bytes[i], p + 16)
        buf[p + 24] = cols.flags[i]
        p += RECORD_BYTES
      }
      await fh.write(buf, 0, p)
    }
  } catch (err) {
    sortFailed(path, err)
  } finally {
    await fh?.close()
  }
}

/** Reads one run file block by block. */
class RunReader {
  /** @param {string} path */
  constructor (path) {
    this.path = path
    this.buf = Buffer.allocUnsafe(BLOCK * RECORD_BYTES)
    /** records in the buffer, and the current one */
    this.count = 0
    this.pos = 0
    /** @type {import('node:fs/promises').FileHandle | null} */
    this.fh = null
  }

  /** @returns {Promise<boolean>} false when the run is exhausted */
  async fill () {
    try {
      this.fh ??= await open(this.path, 'r')
      const { bytesRead } = await this.fh.read(this.buf, 0, this.buf.length)
      this.count = Math.floor(bytesRead / RECORD_BYTES)
      this.pos = 0
    } catch (err) {
      sortFailed(this.path, err)
    }
    return this.count > 0
  }

  /** @returns {number} the current record's time */
  ts () {
    return this.buf.readDoubleLE(this.pos * RECORD_BYTES)
  }

  async close () {
    await this.fh?.close()
    this.fh = null
  }
}

/**
 * Merges sorted run files into batches in time order (ties: lower run first).
 * @param {string[]} paths in file order
 * @param {(ts: number, client: number, object: number, bytes: number, flags: number, out: RequestBatch) => void} emit
 *   appends one request to `out`
 * @returns {AsyncGenerator<RequestBatch>} the same batch object each time, refilled
 */
export async function * mergeRuns (paths, emit) {
  const readers = paths.map((p) => new RunReader(p))
  try {
    /** heap of reader indices, keyed by (current time, index) */
    const heap = []
    for (let r = 0; r < readers.length; r++) if (await readers[r].fill()) heap.push(r)
    const heads = new Float64Array(readers.length)
    for (const r of heap) heads[r] = readers[r].ts()
    const less = (/** @type {number} */ a, /** @type {number} */ b) => heads[a] < heads[b] || (heads[a] === heads[b] && a < b)
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, less)
    const out = new RequestBatch()
    while (heap.length > 0) {
      const r = heap[0]
      const reader = readers[r]
      const p = reader.pos * RECORD_BYTES
      const b = reader.buf
      emit(b.readDoubleLE(p), b.readInt32LE(p + 8), b.readInt32LE(p + 12), b.readDoubleLE(p + 16), b[p + 24], out)
      if (out.full()) {
        yield out
        out.n = 0
      }
      reader.pos++
      if (reader.pos < reader.count || await reader.fill()) {
        heads[r] = reader.ts()
      } else {
        await reader.close()
        const last = /** @type {number} */ (heap.pop())
        if (heap.length === 0) break
        heap[0] = last
      }
      siftDown(heap, 0, less)
    }
    if (out.n > 0) yield out
  } finally {
    for (const reader of readers) await reader.close()
  }
}

/**
 * @param {number[]} heap
 * @param {number} i
 * @param {(a: number, b: number) => boolean} less
 */
function siftDown (heap, i, less) {
  const n = heap.length
  for (;;) {
    const l = 2 * i + 1
    if (l >= n) return
    const c = l + 1 < n && less(heap[l + 1], heap[l]) ? l + 1 : l
    if (!less(heap[c], heap[i])) return
    const t = heap[c]
    heap[c] = heap[i]
    heap[i] = t
    i = c
  }
}
