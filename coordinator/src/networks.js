/**
 * Visitors' networks, named without their addresses: a client address's /24
 * (IPv4) or /48 (IPv6), hashed with a salt the shards share through the store
 * and replace each day (`store.networkSalt()`). Reports are counted once per
 * network where there are no tokens (quarantine.js); with `pairWithinNetwork`
 * a visitor's holdings are listed under its network's name, so that lookups
 * hand it only to visitors of the same network (Session#keys). Neither an
 * address nor a prefix is ever stored or logged.
 */
import { subjectOf } from './quarantine.js'

/**
 * The network a client address belongs to: its /24 (IPv4) or /48 (IPv6).
 * @param {string} ip as the socket gives it ('::ffff:a.b.c.d' for IPv4 on a dual-stack socket)
 * @returns {string}
 */
export function networkOf (ip) {
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+)\.\d+$/i.exec(ip)
  if (v4 !== null) return v4[1]
  const [head, tail = ''] = ip.toLowerCase().split('::')
  const groups = head === '' ? [] : head.split(':')
  if (ip.includes('::')) groups.push(...Array(Math.max(0, 8 - groups.length - (tail === '' ? 0 : tail.split(':').length))).fill('0'), ...(tail === '' ? [] : tail.split(':')))
  return groups.slice(0, 3).map((g) => g.replace(/^0+(?=.)/, '')).join(':')
}

/** how long a coordinator reuses the store's network salt before asking again */
const SALT_CACHE_MS = 60_000

export class Networks {
  /** @param {Pick<import('./store/store.js').Store, 'networkSalt'>} store */
  constructor (store) {
    this.store = store
    /** @type {{ value: Promise<string>, at: number } | null} */
    this.salt = null
  }

  /**
   * The name of the network `ip` belongs to, under today's salt.
   * @param {string} ip
   * @returns {Promise<string>} 22 characters of base64url
   */
  async name (ip) {
    if (this.salt === null || Date.now() - this.salt.at > SALT_CACHE_MS) {
      const value = this.store.networkSalt()
      this.salt = { value, at: Date.now() }
      value.catch(() => { this.salt = null })
    }
    return subjectOf('network', `${await this.salt.value}/${networkOf(ip)}`)
  }
}
