/**
 * How peers reach each other: the ICE servers and policy a `welcome` hands
 * out, and privacy mode.
 *
 * With `turnUrls` and `turnSecret`, each welcome carries a TURN server with
 * credentials minted for that peer (the TURN REST API that coturn's
 * `use-auth-secret` checks: the username is `<expiry, unix s>:<peer id>`, the
 * credential its HMAC-SHA1 under the shared secret), so no lasting TURN
 * password is ever in a page.
 *
 * Privacy mode (`iceTransportPolicy: 'relay'`): peers reach each other only
 * through the TURN relay, so no visitor learns another's address, only the
 * relay's. The welcome tells browsers to gather relay candidates only, and
 * what the coordinator passes on is held to that whatever a client sends (an
 * older page, a tab that knew other settings, a hostile client): a trickled
 * candidate that is not a relay one is refused, candidate lines of other kinds
 * are cut from a description, the address a relay candidate names as its base
 * (`raddr`, which some browsers fill in) is blanked, and so are the addresses
 * of `c=` and `a=rtcp` lines.
 */
import { createHmac } from 'node:crypto'
import { ERRORS, MayghError } from '../../protocol/index.js'

/** The candidate's type (`host`, `srflx`, `prflx`, `relay`). */
const TYPE = /\styp\s+(\w+)/
/** The base address a candidate names (`raddr A rport P`). */
const BASE = /\sraddr\s+\S+\s+rport\s+\d+/

export class Ice {
  /**
   * @param {Pick<import('./config.js').Config, 'iceServers' | 'iceTransportPolicy' | 'turnUrls' | 'turnSecret' | 'turnCredentialSeconds'>} config
   * @param {string} stunUrl this coordinator's own STUN server ('' when it runs none)
   */
  constructor ({ iceServers, iceTransportPolicy, turnUrls, turnSecret, turnCredentialSeconds }, stunUrl) {
    /** @type {object[]} what every welcome carries besides a TURN server of its own */
    this.servers = iceServers ?? (stunUrl === '' ? [] : [{ urls: stunUrl }])
    this.relayOnly = iceTransportPolicy === 'relay'
    this.turnUrls = turnUrls
    this.turnSecret = turnSecret
    this.credentialSeconds = turnCredentialSeconds
  }

  /**
   * What a welcome says about ICE to the peer `id`.
   * @param {string} id
   * @param {number} [nowMs]
   * @returns {{ iceServers: object[], iceTransportPolicy?: 'relay' }}
   */
  welcome (id, nowMs = Date.now()) {
    const iceServers = this.turnUrls === null || this.turnSecret === null
      ? this.servers
      : [...this.servers, turnServer(this.turnUrls, this.turnSecret, id, Math.floor(nowMs / 1000) + this.credentialSeconds)]
    return this.relayOnly ? { iceServers, iceTransportPolicy: 'relay' } : { iceServers }
  }

  /**
   * The signal as it may be passed on: unchanged outside privacy mode; in it,
   * held to relay candidates.
   * @param {Record<string, any>} signal
   * @returns {Record<string, any>}
   * @throws {MayghError} MGH_ERR_RELAY_ONLY for a trickled candidate that is not a relay one
   */
  pass (signal) {
    if (!this.relayOnly) return signal
    const out = { ...signal }
    const candidate = signal.candidate?.candidate
    if (typeof candidate === 'string' && candidate !== '') {
      const type = TYPE.exec(candidate)?.[1]
      if (type !== 'relay') throw new MayghError(ERRORS.MGH_ERR_RELAY_ONLY, `a ${type ?? 'malformed'} candidate`)
      out.candidate = { ...signal.candidate, candidate: candidate.replace(BASE, ' raddr 0.0.0.0 rport 0') }
    }
    if (typeof signal.sdp?.sdp === 'string') out.sdp = { ...signal.sdp, sdp: relayLines(signal.sdp.sdp) }
    return out
  }
}

/**
 * A session description with only its relay candidates, and no address but theirs.
 * @param {string} sdp
 * @returns {string}
 */
function relayLines (sdp) {
  return sdp.split('\r\n').flatMap((line) => {
    if (line.startsWith('a=candidate:')) return TYPE.exec(line)?.[1] === 'relay' ? [line.replace(BASE, ' raddr 0.0.0.0 rport 0')] : []
    if (line.startsWith('c=IN IP4 ') || line.startsWith('a=rtcp:')) return [line.replace(/IN IP4 \S+/, 'IN IP4 0.0.0.0').replace(/IN IP6 \S+/, 'IN IP6 ::')]
    if (line.startsWith('c=IN IP6 ')) return ['c=IN IP6 ::']
    return [line]
  }).join('\r\n')
}

/**
 * A TURN server entry with REST API credentials (what coturn's `use-auth-secret` checks).
 * @param {string[]} urls
 * @param {string} secret
 * @param {string} user
 * @param {number} expiry unix seconds
 * @returns {{ urls: string[], username: string, credential: string }}
 */
export function turnServer (urls, secret, user, expiry) {
  const username = `${expiry}:${user}`
  return { urls, username, credential: createHmac('sha1', secret).update(username).digest('base64') }
}
