/**
 * Streams a trace file into request batches: opens it (plain, gzip, zip),
 * splits lines across chunk boundaries, recognises the format, parses each
 * line in place, interns clients and URLs to integers, and marks the requests
 * Maygh may serve. Bad lines are counted, with a few examples kept; they never
 * stop a run.
 */
import { FLAG_ASSET, RequestBatch } from './batch.js'
import { SimError } from './errors.js'
import { ByteInterner } from './interner.js'
import { openTrace } from './open-trace.js'
import { ClfParser } from './parse-clf.js'
import { CsvParser } from './parse-csv.js'
import { EpaParser } from './parse-epa.js'
import { ParsedLine } from './parse-util.js'

/** examples of bad lines kept for the report */
export const BAD_EXAMPLES = 5
/** characters of a bad line kept */
const EXAMPLE_CHARS = 200

/** @typedef {'auto' | 'clf' | 'epa' | 'csv'} TraceFormat */
/** @typedef {ClfParser | EpaParser | CsvParser} Parser */

/**
 * Which format a first line is in, or null.
 * @param {string} line
 * @returns {'clf' | 'epa' | 'csv' | null}
 */
export function detectFormat (line) {
  if (/(^|,)"?ts_unix"?(,|$)/i.test(line)) return 'csv'
  if (/^\S+ \[\d\d:\d\d:\d\d:\d\d\] "/.test(line)) return 'epa'
  if (/^\S+ \S+ \S+ \[\d\d\/[A-Za-z]{3}\/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "/.test(line)) return 'clf'
  return null
}

/** Reads one trace file into batches; statistics accumulate on the instance. */
export class TraceReader {
  /**
   * @param {string} path
   * @param {{ format?: TraceFormat, assets?: string }} [options] `assets`: URL regex ('' = all)
   */
  constructor (path, options = {}) {
    this.path = path
    /** @type {TraceFormat} */
    this.format = options.format ?? 'auto'
    this.assets = options.assets ? new RegExp(options.assets) : null
    /** @type {Parser | null} */
    this.parser = null
    this.clients = new ByteInterner()
    this.urls = new ByteInterner()
    /** per URL id: 0 unknown, 1 asset, 2 not */
    this.assetOf = new Uint8Array(1024)
    this.rec = new ParsedLine()
    this.lines = 0
    this.requests = 0
    this.badLines = 0
    /** @type {{ line: number, text: string }[]} */
    this.badExamples = []
    /** @type {Buffer | null} */
    this.carry = null
    /** @type {RequestBatch[]} batches filled and not yet handed out */
    this.ready = []
    this.batch = new RequestBatch()
    /** @type {import('./open-trace.js').OpenedTrace | null} */
    this.opened = null
  }

  /** @returns {number} share of the file read, 0–1 */
  progress () {
    return this.opened === null ? 0 : this.opened.progress()
  }

  /**
   * The trace's requests, batch by batch, in file order.
   * @returns {AsyncGenerator<RequestBatch>}
   */
  async * batches () {
    this.opened = await openTrace(this.path)
    if (this.format !== 'auto') this.parser = makeParser(this.format)
    for await (const chunk of this.opened.stream) {
      this.chunk(chunk)
      while (this.ready.length > 0) yield /** @type {RequestBatch} */ (this.ready.shift())
    }
    if (this.carry !== null && this.carry.length > 0) this.line(this.carry, 0, this.carry.length)
    this.carry = null
    if (this.batch.n > 0) this.ready.push(this.batch)
    while (this.ready.length > 0) yield /** @type {RequestBatch} */ (this.ready.shift())
    if (this.requests === 0) {
      throw new SimError('MGH_SIM_ERR_EMPTY', `${this.path}: ${this.lines} lines, ${this.badLines} bad${this.badExamples.length ? `; first: ${JSON.stringify(this.badExamples[0].text)}` : ''}`)
    }
  }

  /**
   * Splits a chunk into lines; a partial last line waits for the next chunk.
   * @param {Buffer} chunk
   */
  chunk (chunk) {
    let start = 0
    if (this.carry !== null) {
      const nl = chunk.indexOf(10)
      if (nl === -1) {
        this.carry = Buffer.concat([this.carry, chunk])
        return
      }
      const line = Buffer.concat([this.carry, chunk.subarray(0, nl)])
      this.carry = null
      this.line(line, 0, line.length)
      start = nl + 1
    }
    for (;;) {
      const nl = chunk.indexOf(10, start)
      if (nl === -1) break
      this.line(chunk, start, nl)
      start = nl + 1
    }
    if (start < chunk.length) this.carry = Buffer.from(chunk.subarray(start))
  }

  /**
   * @param {Buffer} buf
   * @param {number} s
   * @param {number} e
   */
  line (buf, s, e) {
    this.lines++
    if (e > s && buf[e - 1] === 13) e-- // CRLF
    if (this.lines === 1 && e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3 // UTF-8 BOM
    if (e === s) return
    let parser = this.parser
    if (parser === null) {
      const text = buf.toString('latin1', s, Math.min(e, s + 4096))
      const format = detectFormat(text)
      if (format === null) throw new SimError('MGH_SIM_ERR_FORMAT', `first line of ${this.path}: ${JSON.stringify(text.slice(0, 120))}`)
      this.format = format
      parser = this.parser = makeParser(format)
    }
    if (parser instanceof CsvParser && !parser.haveHeader) {
      parser.header(buf, s, e)
      return
    }
    const rec = this.rec
    if (!parser.parse(buf, s, e, rec)) {
      this.bad(buf, s, e)
      return
    }
    this.requests++
    const client = this.clients.intern(rec.hostBuf, rec.hostStart, rec.hostEnd)
    const url = this.urls.intern(rec.urlBuf, rec.urlStart, rec.urlEnd)
    let flags = 0
    if (rec.status === 200 && rec.get && rec.bytes > 0 && this.isAsset(url)) flags = FLAG_ASSET
    const batch = this.batch
    batch.push(rec.ts, client, url, rec.bytes, flags)
    if (batch.full()) {
      this.ready.push(batch)
      this.batch = new RequestBatch()
    }
  }

  /**
   * @param {number} url
   * @returns {boolean} whether Maygh may serve this URL
   */
  isAsset (url) {
    if (this.assets === null) return true
    if (url >= this.assetOf.length) {
      const next = new Uint8Array(Math.max(url + 1, this.assetOf.length * 2))
      next.set(this.assetOf)
      this.assetOf = next
    }
    if (this.assetOf[url] === 0) this.assetOf[url] = this.assets.test(this.urls.string(url)) ? 1 : 2
    return this.assetOf[url] === 1
  }

  /**
   * @param {Buffer} buf
   * @param {number} s
   * @param {number} e
   */
  bad (buf, s, e) {
    this.badLines++
    if (this.badExamples.length < BAD_EXAMPLES) {
      this.badExamples.push({ line: this.lines, text: buf.toString('latin1', s, Math.min(e, s + EXAMPLE_CHARS)) })
    }
  }

  /** @returns {object} what the run report says about the input */
  summary () {
    return {
      kind: 'trace',
      file: this.path,
      format: this.format,
      compression: this.opened?.compression ?? 'none',
      zipEntry: this.opened?.entry ?? null,
      lines: this.lines,
      parsedRequests: this.requests,
      badLines: this.badLines,
      badExamples: this.badExamples,
      clients: this.clients.size,
      objects: this.urls.size
    }
  }
}

/**
 * @param {'clf' | 'epa' | 'csv'} format
 * @returns {Parser}
 */
function makeParser (format) {
  if (format === 'clf') return new ClfParser()
  if (format === 'epa') return new EpaParser()
  if (format === 'csv') return new CsvParser()
  throw new SimError('MGH_SIM_ERR_BAD_VALUE', `--format ${format} is not one of auto, clf, epa, csv`)
}
