/**
 * The asset cache in IndexedDB (database `maygh`, version 1):
 *   `meta`  {hash, size, type, used}  — small, all read into memory at start
 *   `data`  {hash, bytes: Uint8Array} — the asset's bytes
 * kept under a byte quota by evicting the least recently used. Every read is
 * verified against its SHA-256 name; an entry that fails is deleted.
 *
 * IndexedDB's trap: a transaction commits as soon as it has no pending
 * request at the end of a task, so nothing here awaits hashing or network
 * inside one; bytes are hashed before `put` and after `get`, each its own
 * transaction. Requests and transactions become promises with idb-keyval's
 * `promisifyRequest` (resolves on success/complete, rejects on error/abort).
 */
import { promisifyRequest as settle } from 'idb-keyval'
import { matches } from '../../protocol/index.js'

/**
 * @typedef {{ hash: string, size: number, type: string, used: number }} Meta
 * @typedef {(change: { add?: string[], remove?: string[] }) => void} ChangeListener
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
      for (const m of await settle(this.store('meta', 'readonly').getAll())) {
        this.meta.set(m.hash, m)
        this.bytes += m.size
      }
    } catch {
      this.db = null
    }
    await this.evict() // the quota may have been lowered since the last visit
    return this
  }

  /** @param {string} hash */
  has (hash) {
    return this.meta.has(hash)
  }

  /** Held hashes, most recently used first. */
  hashes () {
    return [...this.meta.values()].sort((a, b) => b.used - a.used).map((m) => m.hash)
  }

  /**
   * The asset's verified bytes, or null if absent, unreadable or corrupt (then deleted).
   * @param {string} hash
   * @returns {Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string } | null>}
   */
  async get (hash) {
    const m = this.meta.get(hash)
    if (!m || !this.db) return null
    let rec
    try { rec = await settle(this.store('data', 'readonly').get(hash)) } catch { rec = null }
    const bytes = rec?.bytes
    if (!(bytes instanceof Uint8Array) || !(await matches(bytes, hash))) {
      await this.delete(hash)
      this.options.onCorrupt?.(hash)
      return null
    }
    this.touch(m)
    // what IndexedDB gives back is what put() stored: a Uint8Array over its own ArrayBuffer
    return { bytes: /** @type {Uint8Array<ArrayBuffer>} */ (bytes), type: m.type }
  }

  /**
   * Store verified bytes, evicting least recently used entries to stay under quota.
   * @param {string} hash the bytes' SHA-256 name (the caller has verified it)
   * @param {Uint8Array<ArrayBuffer>} bytes
   * @param {string} type
   * @returns {Promise<boolean>} whether it was stored
   */
  async put (hash, bytes, type) {
    if (!this.db || bytes.length > this.options.quotaBytes) return false
    if (this.meta.has(hash)) return true
    const m = { hash, size: bytes.length, type, used: this.now() }
    try {
      const tx = this.db.transaction(['meta', 'data'], 'readwrite', RELAXED)
      tx.objectStore('meta').put(m)
      tx.objectStore('data').put({ hash, bytes })
      await settle(tx)
    } catch {
      return false
    }
    if (this.meta.has(hash)) return true
    this.meta.set(hash, m)
    this.bytes += m.size
    this.options.onChange?.({ add: [hash] })
    await this.evict(hash)
    return true
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
      bytes -= m.size
    }
    await this.delete(...victims)
  }

  /** @param {...string} hashes */
  async delete (...hashes) {
    const gone = hashes.filter((h) => this.meta.has(h))
    for (const h of gone) {
      this.bytes -= /** @type {Meta} */ (this.meta.get(h)).size
      this.meta.delete(h)
    }
    if (!gone.length) return
    this.options.onChange?.({ remove: gone })
    try {
      const tx = /** @type {IDBDatabase} */ (this.db).transaction(['meta', 'data'], 'readwrite', RELAXED)
      for (const h of gone) {
        tx.objectStore('meta').delete(h)
        tx.objectStore('data').delete(h)
      }
      await settle(tx)
    } catch {}
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
 * Writes need not reach the disk before they count: everything here can be
 * fetched again, and a flushed write per asset queues a page's loads behind
 * each other.
 * @type {IDBTransactionOptions}
 */
const RELAXED = { durability: 'relaxed' }
