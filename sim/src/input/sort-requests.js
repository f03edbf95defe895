/**
 * `--sort`: sorts a trace's requests by time, stably (requests of the same
 * time keep their file order), between the reader and the session window.
 * Requests are held in memory, about 32 bytes each, up to `memoryBytes`;
 * a longer input is sorted in runs of that size written to a temporary
 * directory (under `os.tmpdir()`, i.e. $TMPDIR) and merged from there
 * (sort-runs.js); the directory is removed however the run ends.
 *
 * Client and object ids are renumbered in order of first appearance in
 * time order, as reading an already sorted log would number them, so a
 * shuffled log sorts into exactly the run its sorted original gives.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RequestBatch, growTo } from '../batch.js'
import { mergeRuns, sortFailed, writeRun } from './sort-runs.js'

/** bytes of memory a request takes while it waits to be sorted (columns, order, growth) */
export const SORT_BYTES_PER_REQUEST = 32

/**
 * @typedef {object} SortSummary what the report says about the sort
 * @property {number} requests
 * @property {number} moved requests read after a later-timed one: the ones the sort moved back
 * @property {boolean} onDisk whether runs went to disk
 * @property {number} runs sorted runs merged (1 in memory)
 * @property {number} memoryBytes the --sort-memory it ran with
 */

/** Sorts batches of requests by time. */
export class RequestSorter {
  /** @param {{ memoryBytes: number, tmpRoot?: string }} options */
  constructor (options) {
    this.memoryBytes = options.memoryBytes
    this.tmpRoot = options.tmpRoot ?? tmpdir()
    /** requests one run holds */
    this.runCapacity = Math.max(1024, Math.floor(options.memoryBytes / SORT_BYTES_PER_REQUEST))
    /** the requests held, in file order; grows up to a run */
    this.cols = new RequestBatch(Math.min(this.runCapacity, 1 << 16))
    /** whether the requests held are already in order (then no sort is needed) */
    this.inOrder = true
    this.newest = -Infinity
    this.requests = 0
    this.moved = 0
    this.emitted = 0
    /** @type {string[]} run files written */
    this.runFiles = []
    /** @type {string | null} */
    this.dir = null
    /** new ids by old, -1 unseen */
    this.clientIds = new Int32Array(1024).fill(-1)
    this.objectIds = new Int32Array(1024).fill(-1)
    this.clients = 0
    this.objects = 0
  }

  /**
   * The share of the work done, for the progress bar: reading is the first half.
   * @param {number} readFraction
   * @returns {number}
   */
  progress (readFraction) {
    return this.requests > 0 && this.emitted > 0 ? 0.5 + 0.5 * (this.emitted / this.requests) : 0.5 * readFraction
  }

  /** @returns {SortSummary} */
  summary () {
    return { requests: this.requests, moved: this.moved, onDisk: this.runFiles.length > 0, runs: Math.max(1, this.runFiles.length), memoryBytes: this.memoryBytes }
  }

  /**
   * The requests of `batches`, sorted by time, in batches (the same batch
   * object each time: the consumer must be done with it when it asks for the next).
   * @param {Iterable<RequestBatch> | AsyncIterable<RequestBatch>} batches
   * @returns {AsyncGenerator<RequestBatch>}
   */
  async * sorted (batches) {
    try {
      for await (const b of batches) {
        for (let i = 0; i < b.n; i++) {
          if (this.cols.n === this.runCapacity) await this.spill()
          this.add(b.ts[i], b.client[i], b.object[i], b.bytes[i], b.flags[i])
        }
      }
      if (this.runFiles.length === 0) {
        yield * this.fromMemory()
      } else {
        if (this.cols.n > 0) await this.spill()
        yield * mergeRuns(this.runFiles, (t, c, o, bytes, flags, out) => this.emit(t, c, o, bytes, flags, out))
      }
    } finally {
      if (this.dir !== null) await rm(this.dir, { recursive: true, force: true })
    }
  }

  /**
   * @param {number} t
   * @param {number} c
   * @param {number} o
   * @param {number} bytes
   * @param {number} flags
   */
  add (t, c, o, bytes, flags) {
    this.requests++
    if (t < this.newest) {
      this.moved++
      this.inOrder = false
    } else {
      this.newest = t
    }
    const cols = this.cols
    if (cols.full()) cols.grow(Math.min(this.runCapacity, cols.capacity * 2))
    cols.push(t, c, o, bytes, flags)
  }

  /**
   * The held requests' order by time; ties keep file order.
   * @returns {Uint32Array}
   */
  order () {
    const n = this.cols.n
    const order = new Uint32Array(n)
    for (let i = 0; i < n; i++) order[i] = i
    if (!this.inOrder) {
      const ts = this.cols.ts
      order.sort((a, b) => ts[a] - ts[b] || a - b)
    }
    return order
  }

  /** Sorts the held requests into a run file and empties memory. */
  async spill () {
    if (this.dir === null) {
      try {
        this.dir = await mkdtemp(join(this.tmpRoot, 'maygh-sim-sort-'))
      } catch (err) {
        sortFailed(this.tmpRoot, err)
      }
    }
    const path = join(this.dir, `run-${this.runFiles.length}.bin`)
    this.runFiles.push(path)
    await writeRun(path, this.cols, this.order(), this.cols.n)
    this.cols.n = 0
    this.inOrder = true
  }

  /**
   * The held requests in order, when they all fit in memory.
   * @returns {Generator<RequestBatch>}
   */
  * fromMemory () {
    const order = this.order()
    const { ts, client, object, bytes, flags } = this.cols
    const out = new RequestBatch()
    for (let k = 0; k < this.cols.n; k++) {
      const i = order[k]
      this.emit(ts[i], client[i], object[i], bytes[i], flags[i], out)
      if (out.full()) {
        yield out
        out.n = 0
      }
    }
    if (out.n > 0) yield out
  }

  /**
   * Appends one request to `out` with its ids renumbered.
   * @param {number} t
   * @param {number} c
   * @param {number} o
   * @param {number} bytes
   * @param {number} flags
   * @param {RequestBatch} out
   */
  emit (t, c, o, bytes, flags, out) {
    if (c >= this.clientIds.length) this.clientIds = growTo(this.clientIds, c + 1, -1)
    if (o >= this.objectIds.length) this.objectIds = growTo(this.objectIds, o + 1, -1)
    if (this.clientIds[c] === -1) this.clientIds[c] = this.clients++
    if (this.objectIds[o] === -1) this.objectIds[o] = this.objects++
    out.push(t, this.clientIds[c], this.objectIds[o], bytes, flags)
    this.emitted++
  }
}
