/** A minimal event emitter (`on`/`off`/`emit`); listener errors never reach the emitter. */
export class Emitter {
  constructor () {
    /** @type {Map<string, Set<Function>>} */
    this.listeners = new Map()
  }

  /** @param {string} type @param {Function} fn */
  on (type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set())
    this.listeners.get(type).add(fn)
    return this
  }

  /** @param {string} type @param {Function} fn */
  off (type, fn) {
    this.listeners.get(type)?.delete(fn)
    return this
  }

  /** @param {string} type @param {unknown} event */
  emit (type, event) {
    for (const fn of this.listeners.get(type) ?? []) {
      try { fn(event) } catch (err) { setTimeout(() => { throw err }) }
    }
  }
}
