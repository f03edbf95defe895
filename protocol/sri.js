/**
 * Asset names: SRI SHA-256 strings (`sha256-` + standard base64 of the 32-byte
 * digest of an asset's bytes), how to check one, how to read one out of an
 * `integrity` attribute, and how to compute one with WebCrypto — the SHA-256
 * helper of the browser (Node code, which hashes synchronously, uses
 * `sriHash` in client/manifest.js).
 */

/** An asset name: `sha256-` + standard base64 of 32 bytes. */
export const SRI_PATTERN = /^sha256-[A-Za-z0-9+/]{43}=$/

/**
 * @param {unknown} name
 * @returns {name is string} whether `name` is an asset name
 */
export const isSri = (name) => typeof name === 'string' && SRI_PATTERN.test(name)

/**
 * The asset name of some bytes.
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @returns {Promise<string>}
 */
export async function sriOf (bytes) {
  // WebCrypto's types refuse views that could be over shared memory; asset bytes never are.
  return digestName(new Uint8Array(await crypto.subtle.digest('SHA-256', /** @type {BufferSource} */ (bytes))))
}

/**
 * The asset name a SHA-256 digest makes.
 * @param {Uint8Array} digest 32 bytes
 * @returns {string}
 */
export function digestName (digest) {
  let s = ''
  for (let i = 0; i < digest.length; i++) s += String.fromCharCode(digest[i])
  return 'sha256-' + btoa(s)
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
    if (SRI_PATTERN.test(name)) return name
  }
  return null
}

/**
 * Whether `bytes` are named `name`.
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @param {string} name
 * @returns {Promise<boolean>}
 */
export async function matches (bytes, name) {
  return (await sriOf(bytes)) === name
}
