/**
 * The page's Web Storage (localStorage, sessionStorage), read and written so
 * that storage that is absent, blocked (a privacy setting) or full costs the
 * caller nothing: what it keeps there is only remembered for this page then.
 */

/**
 * @param {Storage | undefined} storage
 * @param {string} key
 * @returns {string} the value kept under `key`; '' when none, or when storage is absent or blocked
 */
export function read (storage, key) {
  try { return storage?.getItem(key) ?? '' } catch { return '' }
}

/**
 * Keep `value` under `key`, if storage lets us.
 * @param {Storage | undefined} storage
 * @param {string} key
 * @param {string} value
 */
export function write (storage, key, value) {
  try { storage?.setItem(key, value) } catch {}
}
