/** What `localStorage` / `sessionStorage` offer, in memory: a page's storage for tests in Node. */
export class MemoryStorage {
  constructor () { this.items = new Map() }
  /** @param {string} k */
  getItem (k) { return this.items.get(k) ?? null }
  /** @param {string} k @param {string} v */
  setItem (k, v) { this.items.set(k, String(v)) }
  /** @param {string} k */
  removeItem (k) { this.items.delete(k) }
}
