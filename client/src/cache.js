/**
 * The asset cache in IndexedDB (database `maygh`, version 1):
 *   `meta`  {hash, size, type, used, pieces?, parts?} — small, all read into memory at start
 *   `data`  {hash, bytes: Uint8Array} — the bytes of an asset, or of one part of a pieced one
 * kept under a byte quota by evicting the least recently used. Every read is
 * verified against its SHA-256 name; an entry that fails is deleted.
 *
 * A large asset named with `pieces` (protocol/pieces.js) is kept in parts,
 * each a `data` record under its own name: its piece list (under the
 * manifest's `pieces`) and each piece; its `meta` lists them (`parts`). A
 * part is read and served alone (`get` of its name: a peer asking for a
 * piece, `range` for the pieces under a range request), and is verified
 * alone; the whole is its verified parts one after the other. Such an asset
 * may also be kept in part, its pieces stored as they come (`beginPieces`,
 * `putPiece`; `have` lists those held): its pieces are served, but the asset
 * is not held (`has`, `hashes`: not announced) until every piece is.
 *
 * IndexedDB's trap: a transaction commits as soon as it has no pending
 * request at the end of a task, so nothing here awaits hashing or network
 * inside one; bytes are hashed before `put` and after `get`, each its own
 * transaction. Requests and transactions become promises with idb-keyval's
 * `promisifyRequest` (resolves on success/complete, rejects on error/abort).
 */
import { promisifyRequest as settle } from 'idb-keyval'
import { PIECE_BYTES, PIECED_ABOVE, matches, pieceNames, piecesOf, splitPieces } from '../../protocol/index.js'

/**
 * @typedef {{ hash: string, size: number, type: string, used: number, pieces?: string, parts?: string[], have?: number[] }} Meta
 *   `pieces`: the name of its piece list; `parts`: that name, then its pieces' names, in order;
 *   `have`: the pieces held of an asset kept in part (none: all of it)
 * @typedef {(change: { add?: string[], remove?: string[] }) => void} ChangeListener
 * @typedef {{ bytes: Uint8Array<ArrayBuffer>, type: string }} Held
 */

export class Cache {
  /**
   * @param {{ quotaBytes: number, onChange?: ChangeListener, onCorrupt?: (hash: string) => void, dbName?: string, now?: () => number, indexedDB?: IDBFactory }} options
   *   `now`: the clock that orders recency, ms since the epoch (stored, so it must outlive the page; default Date.now);
   *   `indexedDB`: the page's, by default
   */
  constructor (options) {
    this.options = options
    this.now = options.now ?? Date.now
    /** @type {IDBDatabase | null} */
    this.db = null
    /** @type {Map<string, Meta>} */
    this.meta = new Map()
    /** @type {Map<string, Meta[]>} a pieced asset's parts (its list, its pieces) → the assets that have it */
    this.parts = new Map()
    /** @type {Promise<void>} the last putPiece's */
    this.pieceWrites = Promise.resolve()
    this.bytes = 0
  }

  /** Open the database and read the index. Without IndexedDB the cache stays empty. */
  async open () {
    try {
      const open = (this.options.indexedDB ?? indexedDB).open(this.options.dbName ?? 'maygh', 1)
      open.onupgradeneeded = () => {
        for (const name of ['meta', 'data']) open.result.createObjectStore(name, { keyPath: 'hash' })
      }
      this.db = await settle(open)
      for (const m of await settle(this.store('meta', 'readonly').getAll())) this.#list(m)
    } catch {
      this.db = null
    }
    await this.evict() // the quota may have been lowered since the last visit
    return this
  }

  /** @param {string} hash @returns {boolean} whether the asset is held whole */
  has (hash) {
    const m = this.meta.get(hash)
    return m !== undefined && !m.have
  }

  /** Hashes held whole, most recently used first. */
  hashes () {
    return [...this.meta.values()].filter((m) => !m.have).sort((a, b) => b.used - a.used).map((m) => m.hash)
  }

  /**
   * Verified bytes by name: a held asset's, or one part's of a pieced asset
   * (a piece, or its list: what a peer asks for by that name). Null if absent,
   * unreadable or corrupt (then the asset is deleted).
   * @param {string} hash
   * @returns {Promise<Held | null>}
   */
  async get (hash) {
    const m = this.meta.get(hash)
    if (m?.have) return null
    if (m?.parts) return this.#read(m, m.parts.slice(1))
    if (m) return this.#read(m, [hash])
    const whole = this.parts.get(hash)?.[0]
    return whole ? this.#read(whole, [hash], '') : null
  }

  /**
   * Bytes `start` to `end` (inclusive, within its size) of a held asset: of a
   * pieced one, only the pieces under them are read.
   * @param {string} hash
   * @param {number} start
   * @param {number} end
   * @returns {Promise<Held | null>}
   */
  async range (hash, start, end) {
    const m = this.meta.get(hash)
    if (!m) return null
    const { first, last } = piecesOf(start, end)
    if (m.have && !Array.from({ length: last + 1 - first }, (_, i) => first + i).every((i) => m.have?.includes(i))) return null
    if (!m.parts) {
      const held = await this.get(hash)
      return held && { bytes: held.bytes.slice(start, end + 1), type: held.type }
    }
    const held = await this.#read(m, m.parts.slice(1 + first, 2 + last))
    const at = first * PIECE_BYTES
    return held && { bytes: held.bytes.subarray(start - at, end + 1 - at), type: held.type }
  }

  /**
   * `names`' records of `m`, each verified, one after the other.
   * @param {Meta} m
   * @param {string[]} names
   * @param {string} [type] the type to say (a part's is none)
   * @returns {Promise<Held | null>}
   */
  async #read (m, names, type = m.type) {
    if (!this.db) return null
    /** @type {Uint8Array[]} */
    let got
    try {
      const data = this.store('data', 'readonly')
      got = (await Promise.all(names.map((name) => settle(data.get(name))))).map((rec) => rec?.bytes)
    } catch { got = [] }
    const ok = got.length === names.length && got.every((b) => b instanceof Uint8Array) &&
      (await Promise.all(got.map((b, i) => matches(b, names[i])))).every(Boolean)
    if (!ok) {
      await this.delete(m.hash)
      this.options.onCorrupt?.(m.hash)
      return null
    }
    this.touch(m)
    // What IndexedDB gives back is what put() stored: a Uint8Array over its own ArrayBuffer.
    if (got.length === 1) return { bytes: /** @type {Uint8Array<ArrayBuffer>} */ (got[0]), type }
    const bytes = new Uint8Array(got.reduce((n, b) => n + b.length, 0))
    let at = 0
    for (const b of got) {
      bytes.set(b, at)
      at += b.length
    }
    return { bytes, type }
  }

  /**
   * Store verified bytes, evicting least recently used entries to stay under quota.
   * @param {string} hash the bytes' SHA-256 name (the caller has verified it)
   * @param {Uint8Array<ArrayBuffer>} bytes
   * @param {string} type
   * @param {string} [pieces] its piece list's name, as the manifest gives it: kept in parts
   *   (above PIECED_ABOVE bytes, when its pieces are listed so; else whole)
   * @returns {Promise<boolean>} whether it was stored
   */
  async put (hash, bytes, type, pieces) {
    if (!this.db || bytes.length > this.options.quotaBytes) return false
    // Kept in part so far: kept whole from now on.
    if (this.meta.get(hash)?.have) await this.delete(hash)
    if (this.meta.has(hash)) return true
    /** @type {Meta} */
    const m = { hash, size: bytes.length, type, used: this.now() }
    /** @type {{ hash: string, bytes: Uint8Array }[]} */
    let records = [{ hash, bytes }]
    if (pieces && bytes.length > PIECED_ABOVE) {
      const split = await splitPieces(bytes)
      if (split.root === pieces) {
        m.pieces = pieces
        m.parts = [pieces, ...split.names]
        records = [{ hash: pieces, bytes: split.list }, ...split.names.map((name, i) => ({ hash: name, bytes: split.pieces[i] }))]
      }
    }
    try {
      const tx = this.db.transaction(['meta', 'data'], 'readwrite', RELAXED)
      tx.objectStore('meta').put(m)
      for (const r of records) tx.objectStore('data').put(r)
      await settle(tx)
    } catch {
      return false
    }
    if (this.meta.has(hash)) return true
    this.#list(m)
    this.options.onChange?.({ add: [hash] })
    await this.evict(hash)
    return true
  }

  /**
   * Keep a pieced asset in part from now on: its verified piece list, then
   * its pieces as they come (putPiece). Nothing if it is kept already.
   * @param {string} hash
   * @param {number} size the asset's
   * @param {string} type
   * @param {string} root its list's name (the manifest's `pieces`)
   * @param {Uint8Array<ArrayBuffer>} list verified against `root` by the caller
   * @returns {Promise<boolean>} whether it is kept (in part or whole)
   */
  async beginPieces (hash, size, type, root, list) {
    if (this.meta.has(hash)) return true
    if (!this.db) return false
    /** @type {Meta} */
    const m = { hash, size, type, used: this.now(), pieces: root, parts: [root, ...pieceNames(list)], have: [] }
    try {
      const tx = this.db.transaction(['meta', 'data'], 'readwrite', RELAXED)
      tx.objectStore('meta').put(m)
      tx.objectStore('data').put({ hash: root, bytes: list })
      await settle(tx)
    } catch {
      return false
    }
    if (!this.meta.has(hash)) this.#list(m)
    return true
  }

  /**
   * Keep piece `index` of an asset kept in part (beginPieces); once it has
   * every piece, the asset is held (and announced: `onChange`).
   * @param {string} hash the asset's
   * @param {number} index
   * @param {Uint8Array<ArrayBuffer>} bytes verified against the piece's name by the caller
   * @returns {Promise<void>}
   */
  putPiece (hash, index, bytes) {
    // One at a time: each writes the asset's list of pieces held, which the one before it changed.
    const put = this.pieceWrites.then(() => this.#putPiece(hash, index, bytes))
    this.pieceWrites = put.catch(() => {})
    return put
  }

  /** @param {string} hash @param {number} index @param {Uint8Array<ArrayBuffer>} bytes */
  async #putPiece (hash, index, bytes) {
    const m = this.meta.get(hash)
    if (!m?.have || !m.parts || m.have.includes(index) || !this.db) return
    const name = m.parts[1 + index]
    const have = [...m.have, index]
    const whole = have.length === m.parts.length - 1
    try {
      const tx = this.db.transaction(['meta', 'data'], 'readwrite', RELAXED)
      tx.objectStore('meta').put({ ...m, have: whole ? undefined : have })
      tx.objectStore('data').put({ hash: name, bytes })
      await settle(tx)
    } catch {
      return
    }
    if (this.meta.get(hash) !== m || m.have.includes(index)) return
    m.have.push(index)
    this.bytes += bytes.length
    this.parts.set(name, [...this.parts.get(name) ?? [], m])
    if (whole) {
      delete m.have
      this.options.onChange?.({ add: [hash] })
    }
    await this.evict(hash)
  }

  /**
   * Evict least recently used entries until the cache fits its quota.
   * @param {string} [keep] never evict this one
   */
  async evict (keep) {
    const victims = []
    let bytes = this.bytes
    for (const m of [...this.meta.values()].sort((a, b) => a.used - b.used)) {
      if (bytes <= this.options.quotaBytes) break
      if (m.hash === keep) continue
      victims.push(m.hash)
      bytes -= kept(m)
    }
    await this.delete(...victims)
  }

  /** @param {...string} hashes */
  async delete (...hashes) {
    const gone = hashes.filter((h) => this.meta.has(h))
    /** @type {string[]} */
    const records = []
    /** @type {string[]} */
    const held = []
    for (const h of gone) {
      const m = /** @type {Meta} */ (this.meta.get(h))
      this.bytes -= kept(m)
      this.meta.delete(h)
      if (!m.have) held.push(h)
      // A part another asset also has (the same piece) stays.
      for (const part of m.parts ?? [h]) {
        const owners = this.parts.get(part)?.filter((o) => o !== m)
        if (owners?.length) this.parts.set(part, owners)
        else this.parts.delete(part)
        if (!this.meta.has(part) && !this.parts.has(part)) records.push(part)
      }
    }
    if (!gone.length) return
    if (held.length) this.options.onChange?.({ remove: held })
    try {
      const tx = /** @type {IDBDatabase} */ (this.db).transaction(['meta', 'data'], 'readwrite', RELAXED)
      for (const h of gone) tx.objectStore('meta').delete(h)
      for (const r of records) tx.objectStore('data').delete(r)
      await settle(tx)
    } catch {}
  }

  /** @param {Meta} m held from now on */
  #list (m) {
    this.meta.set(m.hash, m)
    this.bytes += kept(m)
    const have = m.have
    m.parts?.forEach((part, i) => {
      if (i === 0 || !have || have.includes(i - 1)) this.parts.set(part, [...this.parts.get(part) ?? [], m])
    })
  }

  /** Mark as used now; persisted without waiting (a lost touch only ages the entry). @param {Meta} m */
  touch (m) {
    m.used = this.now()
    if (this.meta.get(m.hash) === m && this.db) settle(this.store('meta', 'readwrite').put(m)).catch(() => {})
  }

  /**
   * One object store in a transaction of its own.
   * @param {'meta' | 'data'} name
   * @param {IDBTransactionMode} mode
   */
  store (name, mode) {
    return /** @type {IDBDatabase} */ (this.db).transaction(name, mode, RELAXED).objectStore(name)
  }
}

/**
 * The bytes an asset takes in the store: all of it, or the pieces it has.
 * @param {Meta} m
 */
const kept = (m) => m.have ? m.have.reduce((n, i) => n + Math.min(PIECE_BYTES, m.size - i * PIECE_BYTES), 0) : m.size

/**
 * Writes need not reach the disk before they count: everything here can be
 * fetched again, and a flushed write per asset queues a page's loads behind
 * each other.
 * @type {IDBTransactionOptions}
 */
const RELAXED = { durability: 'relaxed' }
