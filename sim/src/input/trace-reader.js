/**
 * Streams a trace file into request batches: opens it (plain, gzip, zip),
 * splits lines across chunk boundaries, recognises the format, parses each
 * line in place, interns clients and URLs to integers, and marks the requests
 * peers could serve (static-assets.js), page views (`FLAG_PAGE`: a GET of a
 * page's URL answered 200 or 304), audio or video assets (`FLAG_MEDIA`) and
 * styles, scripts and fonts (`FLAG_BLOCKING`), each by URL or by the content
 * type the line gives. Bad lines are counted, with a few
 * examples kept; they never stop a run. A request whose time is more than
 * `orderTolerance` seconds behind the newest read before it does: the log is
 * not in time order, and replaying it so would mislead (run with --sort).
 */
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_MEDIA, FLAG_PAGE, RequestBatch, growTo } from '../batch.js'
import { INPUT_DEFAULTS, SIM_DEFAULTS } from '../config.js'
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { ByteInterner } from './interner.js'
import { openTrace } from './open-trace.js'
import { ClfParser } from './parse-clf.js'
import { CsvParser } from './parse-csv.js'
import { EpaParser } from './parse-epa.js'
import { ParsedLine } from './parse-util.js'
import { assetRule, isBlockingContentType, isBlockingUrl, isMediaContentType, isMediaUrl, isPageUrl, isStaticContentType, isStaticUrl } from './static-assets.js'

/**
 * bits of `kindOf` (per URL) and `kindOfType` (per content type), above 1 (decided): a page's URL
 * (a navigation); audio or video; a style, script or font (blocks rendering); a static asset's content type
 */
const PAGE = 2
const MEDIA = 4
const BLOCKING = 8
const STATIC_TYPE = 16

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
   * @param {{ format?: TraceFormat, assets?: string, orderTolerance?: number }} [options]
   *   assets: `static`, `all` or a URL regex (config.js); orderTolerance: seconds, Infinity to accept any order
   */
  constructor (path, options = {}) {
    this.path = path
    /** @type {TraceFormat} */
    this.format = options.format ?? 'auto'
    this.rule = assetRule(options.assets ?? SIM_DEFAULTS.assets)
    this.orderTolerance = options.orderTolerance ?? INPUT_DEFAULTS.orderTolerance
    /** @type {Parser | null} */
    this.parser = null
    this.clients = new ByteInterner()
    this.urls = new ByteInterner()
    /** per URL id: 0 unknown, 1 asset, 2 not */
    this.assetOf = new Uint8Array(1024)
    /** per URL id: 0 unknown, else 1 + PAGE, MEDIA, BLOCKING bits */
    this.kindOf = new Uint8Array(1024)
    /** content types seen (a few dozen), and per type id: 0 unknown, else 1 + STATIC_TYPE, MEDIA, BLOCKING bits */
    this.types = new ByteInterner()
    this.kindOfTypes = new Uint8Array(64)
    this.rec = new ParsedLine()
    this.lines = 0
    this.requests = 0
    this.badLines = 0
    /** the newest request time read so far, and its line */
    this.newest = -Infinity
    this.newestLine = 0
    /** counted: requests peers could serve; notServable: not a 200 GET with a body; notAsset: the rest */
    this.counts = { counted: { requests: 0, bytes: 0 }, notServable: { requests: 0, bytes: 0 }, notAsset: { requests: 0, bytes: 0 } }
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
      throw new MayghError(ERRORS.MGH_SIM_ERR_EMPTY, `${this.path}: ${this.lines} lines, ${this.badLines} bad${this.badExamples.length ? `; first: ${JSON.stringify(this.badExamples[0].text)}` : ''}`)
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
      if (format === null) throw new MayghError(ERRORS.MGH_SIM_ERR_FORMAT, `first line of ${this.path}: ${JSON.stringify(text.slice(0, 120))}`)
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
    if (rec.ts >= this.newest) {
      this.newest = rec.ts
      this.newestLine = this.lines
    } else if (this.newest - rec.ts > this.orderTolerance) {
      this.unsorted(buf, s, e)
    }
    this.requests++
    const client = this.clients.intern(rec.hostBuf, rec.hostStart, rec.hostEnd)
    const url = this.urls.intern(rec.urlBuf, rec.urlStart, rec.urlEnd)
    const urlKind = this.kindOfUrl(url)
    let flags = 0
    let kind = this.counts.notServable
    const typed = rec.typeEnd > rec.typeStart
    const typeKind = typed ? this.kindOfType(rec) : 0
    if (rec.status === 200 && rec.get && rec.bytes > 0) {
      kind = this.counts.notAsset
      if (typed && this.rule.kind === 'static' ? (typeKind & STATIC_TYPE) !== 0 : this.isAsset(url)) {
        flags = FLAG_ASSET
        kind = this.counts.counted
        // audio or video, a style, script or font: by its URL, or by what the server said it was
        const either = urlKind | typeKind
        if ((either & MEDIA) !== 0) flags |= FLAG_MEDIA
        if ((either & BLOCKING) !== 0) flags |= FLAG_BLOCKING
      }
    }
    // a page view: the browser navigated to a page (a 304 is one too: its body came from the HTTP
    // cache), unless the line's content type says it was an asset (an image at `/photo?id=3`)
    if ((urlKind & PAGE) !== 0 && rec.get && (rec.status === 200 || rec.status === 304) && (typeKind & STATIC_TYPE) === 0) flags |= FLAG_PAGE
    kind.requests++
    kind.bytes += rec.bytes
    const batch = this.batch
    batch.push(rec.ts, client, url, rec.bytes, flags)
    if (batch.full()) {
      this.ready.push(batch)
      this.batch = new RequestBatch()
    }
  }

  /**
   * @param {number} url
   * @returns {boolean} whether peers may serve this URL (decided once per URL)
   */
  isAsset (url) {
    const rule = this.rule
    if (rule.kind === 'all') return true
    if (url >= this.assetOf.length) this.assetOf = growTo(this.assetOf, url + 1)
    if (this.assetOf[url] === 0) {
      const text = this.urls.string(url)
      this.assetOf[url] = (rule.regex === null ? isStaticUrl(text) : rule.regex.test(text)) ? 1 : 2
    }
    return this.assetOf[url] === 1
  }

  /**
   * @param {number} url
   * @returns {number} 1 + (PAGE if the URL is a page's) + (MEDIA if it is audio or video) + (BLOCKING if a style, script or font), by its extension, decided once per URL
   */
  kindOfUrl (url) {
    if (url >= this.kindOf.length) this.kindOf = growTo(this.kindOf, url + 1)
    let k = this.kindOf[url]
    if (k === 0) {
      const text = this.urls.string(url)
      k = this.kindOf[url] = 1 + (isPageUrl(text) ? PAGE : 0) + (isMediaUrl(text) ? MEDIA : 0) + (isBlockingUrl(text) ? BLOCKING : 0)
    }
    return k
  }

  /**
   * What the content type the line gives says (decided once per type). Under
   * the default rule it decides whether the request is an asset (the server's
   * own word beats the URL's extension).
   * @param {ParsedLine} rec a line with a content type
   * @returns {number} 1 + (STATIC_TYPE if a static asset's) + (MEDIA if audio or video) + (BLOCKING if a style's, script's or font's)
   */
  kindOfType (rec) {
    const type = this.types.intern(rec.typeBuf, rec.typeStart, rec.typeEnd)
    if (type >= this.kindOfTypes.length) this.kindOfTypes = growTo(this.kindOfTypes, type + 1)
    let k = this.kindOfTypes[type]
    if (k === 0) {
      const text = this.types.string(type)
      k = this.kindOfTypes[type] = 1 + (isStaticContentType(text) ? STATIC_TYPE : 0) + (isMediaContentType(text) ? MEDIA : 0) + (isBlockingContentType(text) ? BLOCKING : 0)
    }
    return k
  }

  /**
   * Stops the run at the first request too far out of time order.
   * @param {Buffer} buf
   * @param {number} s
   * @param {number} e
   * @returns {never}
   */
  unsorted (buf, s, e) {
    const t = this.rec.ts
    const iso = (/** @type {number} */ x) => new Date(x * 1000).toISOString().replace('T', ' ').replace('.000Z', ' UTC')
    throw new MayghError(ERRORS.MGH_SIM_ERR_UNSORTED, `${this.path} line ${this.lines} (${JSON.stringify(buf.toString('latin1', s, Math.min(e, s + 120)))}): ` +
      `its time, ${iso(t)}, is ${formatSeconds(this.newest - t)} before the newest time read so far, ${iso(this.newest)} (line ${this.newestLine}); ` +
      `--order-tolerance is ${formatSeconds(this.orderTolerance)}. Run with --sort to sort the input by time`)
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

  /** @returns {Record<string, unknown>} what the run report says about the input */
  summary () {
    const c = this.counts
    return {
      kind: 'trace',
      file: this.path,
      format: this.format,
      compression: this.opened?.compression ?? 'none',
      ...(this.opened?.entry ? { zipEntry: this.opened.entry } : {}),
      lines: this.lines,
      parsedRequests: this.requests,
      badLines: this.badLines,
      badExamples: this.badExamples,
      clients: this.clients.size,
      objects: this.urls.size,
      // the log's own UTC offset, when it has one (CLF lines that agree, EPA's implied EDT); null: UTC
      utcOffsetMinutes: this.parser?.utcOffsetMinutes() ?? null,
      orderTolerance: this.orderTolerance,
      // what peers could serve, and why the rest was left to the origin (the engine counts what was counted)
      assetRule: this.rule.describe,
      leftOut: { notServable: { ...c.notServable }, notAsset: { ...c.notAsset } }
    }
  }
}

/**
 * @param {number} s seconds
 * @returns {string} e.g. "8 s", "1 h 2 min"
 */
function formatSeconds (s) {
  if (s === Infinity) return 'inf'
  if (s < 120) return `${Number(s.toFixed(3))} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  return `${(s / 3600).toFixed(1)} h`
}

/**
 * @param {'clf' | 'epa' | 'csv'} format
 * @returns {Parser}
 */
function makeParser (format) {
  if (format === 'clf') return new ClfParser()
  if (format === 'epa') return new EpaParser()
  if (format === 'csv') return new CsvParser()
  throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--format ${format} is not one of auto, clf, epa, csv`)
}
