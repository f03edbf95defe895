/**
 * Which SHA-256 name a URL's content has: from `integrity` /
 * `data-maygh-integrity` attributes and from the manifest (URL path →
 * {hash, size, type}), the attribute winning. The manifest is fetched only
 * when a URL has no attribute-given name, so a page that names every asset
 * itself makes no manifest request; `refresh` revalidates it (a conditional
 * request: 304 and no body while it is unchanged). Unnamed URLs load from the
 * origin unverified and are never stored or shared.
 */
import { MANIFEST_VERSION, isSri } from '../../protocol/index.js'

/**
 * @typedef {{ hash: string, size?: number, type?: string, pieces?: string, of?: string }} Name
 *   `pieces`: its piece list's name (protocol/pieces.js); `of`: the pieced asset this names a part of
 *   (its list or a piece), whose holders serve it
 */

export class Names {
  /** @param {string} manifestUrl */
  constructor (manifestUrl) {
    this.url = new URL(manifestUrl, location.href).href
    /** @type {Map<string, Name>} attribute-given names, by absolute URL */
    this.given = new Map()
    /** @type {Map<string, Name> | null} the manifest's names, by absolute URL without fragment, once fetched */
    this.listed = null
    /** @type {Promise<Map<string, Name>> | null} the first fetch */
    this.first = null
  }

  /**
   * Fetch the manifest again, revalidating what the HTTP cache holds (304
   * while unchanged). Lookups meanwhile use the names already known; a failed
   * fetch keeps them.
   * @returns {Promise<Map<string, Name>>}
   */
  async refresh () {
    try {
      const res = await fetch(this.url, { cache: 'no-cache' })
      const manifest = await res.json()
      if (res.ok && manifest?.version === MANIFEST_VERSION) {
        const names = new Map()
        for (const [path, entry] of Object.entries(manifest.assets ?? {})) {
          if (isSri(entry?.hash)) names.set(key(path), entry)
        }
        this.listed = names
      }
    } catch {}
    return (this.listed ??= new Map())
  }

  /** @param {string} url @param {string} hash */
  set (url, hash) {
    this.given.set(key(url), { hash })
  }

  /**
   * The URL's name; an attribute-given one needs no manifest.
   * @param {string} url
   * @returns {Promise<Name | null>}
   */
  async get (url) {
    const k = key(url)
    const given = this.given.get(k)
    const listed = (given && !this.first) ? undefined : (this.listed ?? await (this.first ??= this.refresh())).get(k)
    if (given && listed?.hash !== given.hash) return given
    return listed ?? given ?? null
  }
}

/** @param {string} url */
export function key (url) {
  const u = new URL(url, location.href)
  u.hash = ''
  return u.href
}
