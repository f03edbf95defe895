/**
 * Join tokens: what a site's backend hands its pages so that only its visitors
 * use its coordinators. A token is `v1.<payload>.<mac>`, both parts base64url:
 * the payload is the JSON `{o, v, e}` (the site's origin, a name for the
 * visitor chosen by the site, the expiry in Unix seconds) and the mac is its
 * HMAC-SHA-256 under a secret the site and its coordinators share.
 *
 * The coordinator accepts a token only for a socket whose `Origin` header is
 * the token's origin (a browser sets that header; no page can forge it), so a
 * token copied off one site is of no use to pages of another. Each `welcome`
 * carries a fresh token for the same origin and visitor, which the client
 * joins with next time, so a page open for hours can still reconnect.
 *
 * Node only (the site's backend and the coordinator); `maygh-token` is the CLI.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ERRORS, MayghError } from '../../protocol/index.js'

const VERSION = 'v1'
/** a token's lifetime when the caller gives none: long enough to load a page and join */
export const DEFAULT_TOKEN_TTL_SECONDS = 600
/** the shortest secret accepted: 32 characters (e.g. `openssl rand -base64 32`) */
export const MIN_SECRET_LENGTH = 32
/** longest token read (the join message's field); a real one is about 150 characters */
export const MAX_TOKEN_LENGTH = 1024
/** longest visitor name */
export const MAX_VISITOR_LENGTH = 128
/** longest lifetime of a token: a week */
export const MAX_TOKEN_TTL_SECONDS = 7 * 86400

/**
 * @typedef {object} JoinClaims
 * @property {string} origin the site's origin, as browsers send it (`https://shop.example`)
 * @property {string} visitor the site's name for this visitor (a session id's hash, say; '' for none)
 * @property {number} expiresAt Unix seconds after which the token is refused
 */

/**
 * Sign a join token.
 *
 * @param {{ origin: string, visitor?: string, ttlSeconds?: number, now?: number }} claims
 *   `now`: ms since the epoch (default Date.now())
 * @param {string} secret shared with the coordinators (their `tokenSecrets`), at least 32 characters
 * @returns {string}
 * @throws {TypeError} on a bad origin, visitor, lifetime or secret
 */
export function signJoinToken ({ origin, visitor = '', ttlSeconds = DEFAULT_TOKEN_TTL_SECONDS, now = Date.now() }, secret) {
  checkSecret(secret)
  if (!isOrigin(origin)) throw new TypeError(`origin must be scheme://host[:port], got ${JSON.stringify(origin)}`)
  if (typeof visitor !== 'string' || visitor.length > MAX_VISITOR_LENGTH) throw new TypeError(`visitor must be a string of at most ${MAX_VISITOR_LENGTH} characters`)
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TOKEN_TTL_SECONDS) throw new TypeError(`ttlSeconds must be an integer from 1 to ${MAX_TOKEN_TTL_SECONDS} (a week)`)
  const payload = Buffer.from(JSON.stringify({ o: origin, v: visitor, e: Math.floor(now / 1000) + ttlSeconds })).toString('base64url')
  return `${VERSION}.${payload}.${mac(payload, secret)}`
}

/**
 * Check a token: signed by one of `secrets`, not expired, for `origin`.
 *
 * @param {unknown} token what the join carried
 * @param {readonly string[]} secrets any may have signed it (the first is the current one; the rest are being rotated out)
 * @param {{ origin: string, now?: number }} expected `origin`: the socket's Origin header ('' when it sent none)
 * @returns {JoinClaims}
 * @throws {MayghError} MGH_ERR_TOKEN_MISSING, MGH_ERR_TOKEN_INVALID (malformed or forged), MGH_ERR_TOKEN_EXPIRED, MGH_ERR_TOKEN_ORIGIN
 */
export function verifyJoinToken (token, secrets, { origin, now = Date.now() }) {
  if (token === undefined || token === '') throw new MayghError(ERRORS.MGH_ERR_TOKEN_MISSING)
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw new MayghError(ERRORS.MGH_ERR_TOKEN_INVALID, 'not a token')
  const [version, payload, signature, ...rest] = token.split('.')
  if (version !== VERSION || payload === undefined || signature === undefined || rest.length > 0) throw new MayghError(ERRORS.MGH_ERR_TOKEN_INVALID, 'not a v1 token')
  const given = Buffer.from(signature, 'base64url')
  const signed = secrets.some((secret) => {
    const expected = Buffer.from(mac(payload, secret), 'base64url')
    return expected.length === given.length && timingSafeEqual(expected, given)
  })
  if (!signed) throw new MayghError(ERRORS.MGH_ERR_TOKEN_INVALID, 'bad signature')
  const claims = parsePayload(payload)
  if (claims === null) throw new MayghError(ERRORS.MGH_ERR_TOKEN_INVALID, 'bad payload')
  if (claims.expiresAt * 1000 <= now) throw new MayghError(ERRORS.MGH_ERR_TOKEN_EXPIRED, `expired ${Math.round(now / 1000 - claims.expiresAt)} s ago`)
  if (claims.origin !== origin) throw new MayghError(ERRORS.MGH_ERR_TOKEN_ORIGIN, `token for ${claims.origin}, page at ${origin || 'no origin'}`)
  return claims
}

/**
 * @param {string} payload base64url
 * @returns {JoinClaims | null} null when it is not the JSON a signer writes
 */
function parsePayload (payload) {
  try {
    const { o, v, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    if (typeof o !== 'string' || typeof v !== 'string' || !Number.isSafeInteger(e)) return null
    return { origin: o, visitor: v, expiresAt: e }
  } catch {
    return null
  }
}

/**
 * @param {string} payload
 * @param {string} secret
 * @returns {string} base64url HMAC-SHA-256 of the version and payload
 */
function mac (payload, secret) {
  return createHmac('sha256', secret).update(`${VERSION}.${payload}`).digest('base64url')
}

/**
 * @param {unknown} secret
 * @throws {TypeError} unless a string of at least MIN_SECRET_LENGTH characters
 */
export function checkSecret (secret) {
  if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) throw new TypeError(`a token secret must be at least ${MIN_SECRET_LENGTH} characters`)
}

/**
 * Whether `text` is an origin as browsers send it in the `Origin` header: a
 * scheme, a host and maybe a port, nothing else.
 * @param {unknown} text
 * @returns {boolean}
 */
export function isOrigin (text) {
  if (typeof text !== 'string') return false
  try {
    return new URL(text).origin === text
  } catch {
    return false
  }
}
