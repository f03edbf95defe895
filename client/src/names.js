/**
 * Which SHA-256 name a URL's content has: from the manifest (URL path →
 * {hash, size, type}) and from `integrity` / `data-maygh-integrity`
 * attributes, the attribute winning. Unnamed URLs load from the origin
 * unverified and are never cached or shared.
 */
import { MANIFEST_VERSION, isSri } from '../../protocol/index.js'

/** @typedef {{ hash: string, size?: number, type?: string }} Name */

export class Names {
  /** @param {string} manifestUrl */
  constructor (manifestUrl) {
    /** @type {Map<string, Name>} by absolute URL without fragment */
    this.names = new Map()
    /** @type {Map<string, Name>} attribute-given names, by absolute URL */
    this.given = new Map()
    this.ready = this.fetchManifest(manifestUrl)
  }

  /** @param {string} manifestUrl */
  async fetchManifest (manifestUrl) {
    try {
      const res = await fetch(new URL(manifestUrl, location.href), { cache: 'no-cache' })
      const manifest = await res.json()
      if (!res.ok || manifest?.version !== MANIFEST_VERSION) return
      for (const [path, entry] of Object.entries(manifest.assets ?? {})) {
        if (isSri(entry?.hash)) this.names.set(key(path), entry)
      }
    } catch {}
  }

  /** @param {string} url @param {string} hash */
  set (url, hash) {
    this.given.set(key(url), { hash })
  }

  /** @param {string} url @returns {Name | null} */
  get (url) {
    const k = key(url)
    const given = this.given.get(k)
    const listed = this.names.get(k)
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
