/**
 * One load-generating client for `--server bittorrent-tracker`: a plain `ws`
 * WebSocket speaking WebTorrent's tracker protocol, with the same interface
 * as the coordinator's {@link import('./bench-client.js').BenchClient}, so
 * that the same transactions run against both servers.
 *
 * What the coordinator does in three requests, the tracker does in three
 * announces, one swarm (info hash) per asset:
 *   join    → `started` (left 0) in the swarm of each asset held
 *   transaction, fetching `add` and dropping the asset at `index`:
 *     lookup + connect → `started` in `add`'s swarm with one offer, which the
 *                        tracker forwards to one random other peer there
 *     update           → `completed` in `add`'s swarm, `stopped` in the dropped one's
 * Each announce is answered with one frame, and the forwarded offer is one
 * more: three frames in and four out, as with the coordinator. The tracker's
 * replies name no request, so a client has one announce in flight at a time
 * and takes the replies in order.
 */
import { randomBytes } from 'node:crypto'
import { sha256FromIntegrity } from '../../protocol/index.js'
import { LoadClient, ReplyError } from './bench-client.js'

/** @typedef {import('ws').WebSocket} WebSocket */

/** What an offer carries: the shape of a WebRTC offer, as WebTorrent sends it. */
const OFFER = Object.freeze({ type: 'offer', sdp: 'v=0' })

/**
 * @param {string} sri an asset's SRI name
 * @returns {string} its info hash as the tracker protocol carries it: 20 bytes as a binary string
 */
function infoHash (sri) {
  return Buffer.from(/** @type {string} */ (sha256FromIntegrity(sri)), 'base64').subarray(0, 20).toString('latin1')
}

/** @typedef {{ action?: string, 'failure reason'?: string, offer?: unknown, answer?: unknown, complete?: number, incomplete?: number }} TrackerReply */

/** @extends {LoadClient<TrackerReply>} */
export class TrackerBenchClient extends LoadClient {
  /** @param {WebSocket} ws */
  constructor (ws) {
    super(ws)
    // WebTorrent's peer ids are 20 characters, a client prefix and random ones.
    this.peerId = `-MB0001-${randomBytes(9).toString('base64url')}`
  }

  /** @param {string} text */
  receive (text) {
    /** @type {TrackerReply} */
    const message = JSON.parse(text)
    if (message.offer !== undefined) {
      this.signalsIn++
      return
    }
    const failure = message['failure reason']
    const [first] = this.pending
    if (first === undefined) return this.countUnmatched(failure === undefined ? 'BENCH_UNEXPECTED' : 'BT_FAILURE')
    const [ref, waiter] = first
    this.pending.delete(ref)
    if (failure !== undefined) waiter.reject(new ReplyError('BT_FAILURE', failure))
    else waiter.resolve(message)
  }

  /**
   * @param {string} asset the SRI name of the swarm's asset
   * @param {'started' | 'completed' | 'stopped'} event
   * @param {{ left: number, offer?: boolean }} fields `offer`: send one offer, for the tracker to forward
   * @returns {Promise<TrackerReply>}
   */
  announce (asset, event, { left, offer = false }) {
    return this.send(`announce-${event}`, (ref) => JSON.stringify({
      action: 'announce',
      info_hash: infoHash(asset),
      peer_id: this.peerId,
      event,
      uploaded: 0,
      downloaded: 0,
      left,
      numwant: offer ? 1 : 0,
      ...(offer ? { offers: [{ offer: OFFER, offer_id: `${this.peerId.slice(8)}${String(ref).padStart(8, '0')}` }] } : {})
    }))
  }

  /** @param {string[]} have */
  async join (have) {
    for (const asset of have) await this.announce(asset, 'started', { left: 0 })
    this.holdAll(have)
  }

  /**
   * A page view in the tracker's protocol, one swarm per asset: `started`
   * (left 0) in each swarm it holds, `started` in each of the page's assets'
   * swarms (the first `offers` of them carrying one offer), then `completed`
   * in each: what a WebTorrent client with a torrent per asset announces.
   * @param {string[]} have
   * @param {string[]} assets
   * @param {number} offers
   */
  async page (have, assets, offers) {
    await this.join(have)
    let found = false
    for (const [i, asset] of assets.entries()) {
      const { complete = 0, incomplete = 0 } = await this.announce(asset, 'started', { left: 1, offer: i < offers })
      if (i < offers && complete + incomplete > 1) found = true
    }
    for (const asset of assets) await this.announce(asset, 'completed', { left: 0 })
    return found
  }

  /**
   * One transaction: fetch `add` (join its swarm with an offer to one peer),
   * then hold it instead of the asset at `index` in {@link held}.
   *
   * @param {string} add an asset not held
   * @param {number} index of the asset to drop
   * @returns {Promise<boolean>} whether the offer went to a peer (another one was in the swarm)
   */
  async transaction (add, index) {
    const { complete = 0, incomplete = 0 } = await this.announce(add, 'started', { left: 1, offer: true })
    await this.announce(add, 'completed', { left: 0 })
    await this.announce(this.held[index], 'stopped', { left: 0 })
    this.hold(add, index)
    // The counts include this client, which has just joined the swarm.
    return complete + incomplete > 1
  }
}
