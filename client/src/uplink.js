/**
 * Whether this visitor uploads to other visitors, worked out each time it is
 * asked from:
 *
 * - the visitor's own choice, `Maygh.optOut()` / `Maygh.optIn()`, kept in
 *   localStorage (`maygh-choice`): out is `off`, in is `on`, whatever the site's default;
 * - else the site's default, `data-maygh-mode`: `on`, `receive-only` or `off`;
 * - then, when that says `on`, receive-only while the browser asks to save
 *   data (`navigator.connection.saveData`) or is on a cellular connection
 *   (`navigator.connection.type`), or once the upload budget is spent: bytes
 *   sent this session (sessionStorage, so a reload continues it) or today
 *   (localStorage, shared by the site's tabs).
 *
 * `off` uses no peers at all (no coordinator either); `receive-only` fetches
 * from peers but announces nothing and serves nobody. Emits `change` with the
 * new mode whenever it changes (a choice, a budget spent, the connection or
 * another tab's choice changed).
 */
import { Emitter } from './emitter.js'
import { read, write } from './storage.js'

/** @typedef {'on' | 'receive-only' | 'off'} Mode */
export const MODES = /** @type {const} */ (['on', 'receive-only', 'off'])

const CHOICE = 'maygh-choice'
const SENT = 'maygh-sent'

export class Uplink extends Emitter {
  /** @type {ConstructorParameters<typeof Uplink>[0]} */
  #config
  /** @type {NonNullable<ConstructorParameters<typeof Uplink>[1]>} */
  #env
  /** @type {Mode} the mode last told (`change`) */
  #mode

  /**
   * @param {{ mode: string, uploadSessionMb: number, uploadDayMb: number }} config
   * @param {{ localStorage?: Storage, sessionStorage?: Storage, navigator?: Navigator & { connection?: any }, addEventListener?: Function, Date?: DateConstructor }} [env]
   *   where storage and the connection come from (the page's globals)
   */
  constructor (config, env = globalThis) {
    super()
    this.#config = config
    this.#env = env
    this.#mode = this.state().mode
    const check = () => this.#check()
    env.navigator?.connection?.addEventListener?.('change', check)
    env.addEventListener?.('storage', check)
  }

  /** Bytes sent this session and today. */
  sent () {
    // `<date> <bytes>`: the date has spaces of its own
    const today = read(this.#env.localStorage, SENT)
    const at = today.lastIndexOf(' ')
    return {
      session: Number(read(this.#env.sessionStorage, SENT)) || 0,
      day: today.slice(0, at) === this.#today() ? Number(today.slice(at + 1)) || 0 : 0
    }
  }

  #today () {
    return new (this.#env.Date ?? Date)().toDateString()
  }

  /**
   * The mode, and why it is not `on` (`site`, `opted-out`, `save-data`, `cellular`, `budget`).
   * @returns {{ mode: Mode, why?: string }}
   */
  state () {
    const choice = read(this.#env.localStorage, CHOICE)
    const mode = choice === 'out' ? 'off' : choice === 'in' ? 'on' : /** @type {Mode} */ (this.#config.mode)
    if (mode !== 'on') return { mode, why: choice ? 'opted-out' : 'site' }
    const connection = this.#env.navigator?.connection
    const sent = this.sent()
    const why = connection?.saveData
      ? 'save-data'
      : connection?.type === 'cellular'
        ? 'cellular'
        : sent.session >= this.#config.uploadSessionMb * 1048576 || sent.day >= this.#config.uploadDayMb * 1048576
          ? 'budget'
          : ''
    return why ? { mode: 'receive-only', why } : { mode }
  }

  /** Whether to announce and serve now. */
  serving () {
    return this.state().mode === 'on'
  }

  /** `bytes` went to another visitor. @param {number} bytes */
  spend (bytes) {
    const sent = this.sent()
    write(this.#env.sessionStorage, SENT, String(sent.session + bytes))
    write(this.#env.localStorage, SENT, `${this.#today()} ${sent.day + bytes}`)
    this.#check()
  }

  /** The visitor's choice, remembered across visits. @param {'in' | 'out'} choice */
  choose (choice) {
    write(this.#env.localStorage, CHOICE, choice)
    this.#check()
  }

  /** Emit `change` if the mode is no longer what it was. */
  #check () {
    const { mode } = this.state()
    if (mode === this.#mode) return
    this.#mode = mode
    this.emit('change', mode)
  }
}
