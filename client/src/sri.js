/**
 * Content names: SRI SHA-256 strings (`sha256-<base64>`) of an asset's bytes,
 * computed with WebCrypto so the same code runs in browsers and Node.
 */

const SRI_RE = /^sha256-[A-Za-z0-9+/]{43}=$/

/**
 * @param {BufferSource} bytes
 * @returns {Promise<string>}
 */
export async function sriOf (bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  let s = ''
  for (let i = 0; i < digest.length; i++) s += String.fromCharCode(digest[i])
  return 'sha256-' + btoa(s)
}

/**
 * Whether `bytes` are named `hash`.
 * @param {BufferSource} bytes
 * @param {string} hash
 */
export async function matches (bytes, hash) {
  return (await sriOf(bytes)) === hash
}

/**
 * The SHA-256 name in an `integrity` attribute value (which may list several
 * hashes, space-separated, with options after `?`), or null.
 * @param {string | null | undefined} value
 * @returns {string | null}
 */
export function sha256FromIntegrity (value) {
  for (const token of (value ?? '').trim().split(/\s+/)) {
    const name = token.split('?')[0]
    if (SRI_RE.test(name)) return name
  }
  return null
}

/** @param {unknown} hash */
export const isSri = (hash) => typeof hash === 'string' && SRI_RE.test(hash)
