/** A minimal event emitter (`on`/`off`/`emit`); listener errors never reach the emitter. */
export class Emitter {
  /** @type {Map<string, Set<Function>>} */
  #listeners = new Map()

  /** @param {string} type @param {Function} fn */
  on (type, fn) {
    let set = this.#listeners.get(type)
    if (set === undefined) this.#listeners.set(type, set = new Set())
    set.add(fn)
    return this
  }

  /** @param {string} type @param {Function} fn */
  off (type, fn) {
    this.#listeners.get(type)?.delete(fn)
    return this
  }

  /** @param {string} type @param {unknown} event */
  emit (type, event) {
    for (const fn of this.#listeners.get(type) ?? []) {
      try { fn(event) } catch (err) { setTimeout(() => { throw err }) }
    }
  }
}
