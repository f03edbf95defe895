/**
 * The open peer connections, by peer id: reuses an open channel, dedupes
 * concurrent attempts to reach the same peer, answers incoming offers, and
 * routes each signal to its connection by `(from, cid)`. Every open channel
 * gets a Transfer, so either side may request over it.
 */
import { PeerLink } from './peer-link.js'
import { channelPassOverMs, smooth } from '../../policy/hedge-rule.js'
import { Transfer } from './transfer.js'
import { CLIENT_ERRORS, MayghError, newCid } from '../../protocol/index.js'

/** connections kept at most; beyond it the least recently active idle one is closed, or the offer ignored */
const MAX_LINKS = 48

/** An invited holder's offer did not come in time (PeerPool.invited): the page makes its own. */
const UNANSWERED = new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, 'invitation unanswered')

/**
 * A way to the coordinator that a connection's signals take: the page's own
 * socket (signaling.js), or, before that has joined, its worker's
 * (worker-route.js). A connection keeps the route it started on: its peer
 * was introduced to the peer id of that route.
 * @typedef {{ ice: RTCConfiguration, send: (msg: Record<string, unknown>) => boolean, request: (msg: Record<string, unknown>, timeoutMs: number, options?: { retry?: boolean, afterJoin?: boolean }) => Promise<any>, on: (type: string, fn: Function) => unknown }} Route
 */

/**
 * A signal as another peer sent it: only `cid` is checked here. The sdp and
 * candidate go to the browser's WebRTC API as they are, which rejects a bad
 * one; the link then closes (PeerLink.handle).
 * @typedef {{ cid?: unknown, sdp?: RTCSessionDescriptionInit, candidate?: RTCIceCandidateInit, invite?: unknown }} IncomingSignal
 */

export class PeerPool {
  /** @type {ConstructorParameters<typeof PeerPool>[0]} */
  #options
  /** @type {Map<string, PeerLink>} by `${peer} ${cid}` */
  links = new Map()
  /** @type {Map<string, Transfer>} the open transfer used to request from each peer */
  #open = new Map()
  /** @type {Set<Transfer>} every open transfer */
  #transfers = new Set()
  /** @type {Map<string, Promise<Transfer>>} outgoing attempts in progress, by peer id */
  #connecting = new Map()
  /** @type {Map<string, number>} when each attempt in `connecting` began (performance.now()) */
  #began = new Map()
  /** @type {number | null} how long this page's channels we offered took to open, smoothed (ms; null before one did) */
  openPace = null
  /** @type {Map<string, object[]>} signals that arrived before their offer, by key */
  early = new Map()
  /** @type {Map<string, { link: PeerLink, unsent: object[] }>} offers made before their peer was known (prepare), by cid */
  unbound = new Map()
  /** @type {WeakMap<PeerLink, Route>} the route each connection's signals take */
  #routes = new WeakMap()
  /** @type {WeakSet<PeerLink>} connections to invited holders whose offer has not come yet (invited) */
  #untimed = new WeakSet()
  /** @type {Map<string, Route>} peers a lookup through another route than the page's own socket named (introduce) */
  #via = new Map()

  /**
   * @param {object} options
   * @param {import('./signaling.js').Signaling} options.signaling the page's own socket
   * @param {import('./worker-route.js').WorkerRoute | null} [options.relay] its worker's, when it has one (transparent mode)
   * @param {{ connectTimeoutMs: number, stallMs: number }} options.config
   * @param {{ RTCPeerConnection?: typeof RTCPeerConnection }} [options.env] where RTCPeerConnection comes from, read for each new
   *   connection (the page's globals by default, so that a page that replaces it later is heard)
   * @param {import('./transfer.js').TransferOptions['serve']} options.serve
   * @param {(peer: string, hash: string, bytes: number) => void} options.onServed
   * @param {() => boolean} [options.serving] whether to answer offers (no: receive-only)
   * @param {import('./reach.js').Reach} [options.reach] told of every channel that opens, and of each we offered that does
   *   not open within a fifth of connectTimeoutMs (the pass-over) or fails
   */
  constructor (options) {
    this.#options = options
    // signaling checked that `from` is a string and `signal` an object; onSignal checks `cid`
    options.signaling.on('connect', (/** @type {{ from: string, signal: IncomingSignal, introduced?: unknown }} */ msg) => this.#onSignal(msg.from, msg.signal, msg.introduced === true))
    // A connection still being set up has lost its signalling path (and the
    // peer id it was set up under): fail it now, so its load moves on to the
    // next holder or the origin instead of waiting out connectTimeoutMs.
    // Open channels do not need the coordinator and stay.
    for (const route of [options.signaling, options.relay]) route?.on('down', () => this.#lost(route))
    // Only answers and candidates come this way (the worker's peer serves nothing: nobody offers to it).
    options.relay?.on('connect', (/** @type {{ from: string, signal: IncomingSignal }} */ msg) => this.#onSignal(msg.from, msg.signal))
  }

  /**
   * A route to the coordinator is gone: connections still being set up on it fail now.
   * @param {Route} route
   */
  #lost (route) {
    for (const link of this.links.values()) if (!link.up && this.#routes.get(link) === route) link.close(new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE))
    for (const [peer, r] of this.#via) if (r === route) this.#via.delete(peer)
  }

  /**
   * Peers a lookup through `route` named: connections to them signal that way (they were introduced to its peer id).
   * @param {string[]} peers
   * @param {Route} route
   */
  introduce (peers, route) {
    if (route === this.#options.signaling) return
    for (const p of peers) this.#via.set(p, route)
  }

  /**
   * The route a connection to `peer` signals through.
   * @param {string} peer
   * @returns {Route}
   */
  routeOf (peer) {
    return this.#via.get(peer) ?? this.#options.signaling
  }

  /**
   * Close every connection to `peer` (it failed us), or every connection
   * (the visitor opted out): requests waiting on it, and loads waiting for it
   * to connect, fail now and move on.
   * @param {string} [peer] none: all
   */
  drop (peer) {
    for (const link of this.links.values()) if (peer === undefined || link.peer === peer) link.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CHANNEL_CLOSED, 'dropped'))
  }

  /** Peer ids we hold an open channel to. */
  connected () {
    return [...this.#open.keys()]
  }

  /**
   * Whether a channel to `peer` is open or being set up (a `transfer` would not start a new one).
   * @param {string} peer
   */
  reaching (peer) {
    return this.#open.get(peer)?.open === true || this.#connecting.has(peer)
  }

  /**
   * An open transfer to `peer`, connecting if need be.
   * @param {string} peer
   * @returns {Promise<Transfer>}
   */
  transfer (peer) {
    const open = this.#open.get(peer)
    if (open?.open) return Promise.resolve(open)
    let attempt = this.#connecting.get(peer)
    if (!attempt) {
      if (this.links.size >= MAX_LINKS) this.#closeIdlest()
      attempt = this.#reach(peer, this.#createLink(peer, newCid(), true, this.routeOf(peer)))
    }
    return attempt
  }

  /**
   * @param {string} peer
   * @param {PeerLink} link offering to it
   * @param {boolean} [timed] timed from now (else from when its peer's offer comes: #timeFrom)
   * @param {(err: any) => Promise<Transfer>} [failed] the attempt's way on when `link` fails (none: it fails)
   * @returns {Promise<Transfer>} the attempt `transfer` hands out until the channel opens
   */
  #reach (peer, link, timed = true, failed = (err) => { throw err }) {
    const attempt = link.opened.then((channel) => {
      const began = this.#began.get(peer)
      if (began !== undefined) this.openPace = smooth(this.openPace, performance.now() - began)
      return this.#attach(link, channel)
    }).catch(failed)
    attempt.finally(() => {
      this.#connecting.delete(peer)
      this.#began.delete(peer)
    }).catch(() => {})
    this.#connecting.set(peer, attempt)
    if (timed) this.#timeFrom(link)
    return attempt
  }

  /**
   * Time the attempt to open `link` from now: its pass-over (peer-fetch.js), its pace, its reach.
   * @param {PeerLink} link
   */
  #timeFrom (link) {
    const began = performance.now()
    this.#began.set(link.peer, began)
    this.#noteReach(link, began)
  }

  /**
   * Tell `options.reach` how a channel we offered fares, once: it opened, or
   * it did not within the pass-over (a fifth of connectTimeoutMs: still
   * trying then, failed before, or closed by us at it, as a load that passes
   * over its holder does). One we closed sooner (the page went) says nothing.
   * @param {PeerLink} link
   * @param {number} began when the attempt began (performance.now())
   */
  #noteReach (link, began) {
    const reach = this.#options.reach
    if (!reach) return
    const passOver = channelPassOverMs(this.#options.config.connectTimeoutMs)
    let counted = false
    const miss = () => {
      if (!counted) reach.miss()
      counted = true
    }
    const timer = setTimeout(miss, passOver)
    link.opened.then(() => reach.opened(), (err) => {
      const failed = err?.code === CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED.code || err?.code === CLIENT_ERRORS.MGH_ERR_CONNECT_TIMEOUT.code
      if (failed || performance.now() - began >= passOver) miss()
    }).finally(() => clearTimeout(timer))
  }

  /**
   * When the attempt to reach `peer` now in progress began.
   * @param {string} peer
   * @returns {number | undefined} performance.now() then; undefined when none is in progress
   */
  reachingSince (peer) {
    return this.#began.get(peer)
  }

  /**
   * Offers made before the peers they are for are known (protocol 3): a
   * lookup carries them, the coordinator hands each to one holder it names,
   * and `bind` ties them to those holders. Their ICE candidates wait until then.
   * @param {number} n
   * @param {Route} [route] the one the lookup goes by (its ICE servers are the offers')
   * @returns {Promise<import('./peer-link.js').Signal[]>} the offers, once made
   */
  prepare (n, route = this.#options.signaling) {
    /** @type {Promise<import('./peer-link.js').Signal | null>[]} */
    const offers = []
    for (let i = 0; i < n && this.links.size < MAX_LINKS; i++) {
      const link = this.#createLink('', newCid(), true, route)
      offers.push(/** @type {Promise<import('./peer-link.js').Signal>} */ (link.offered).catch(() => null))
    }
    return Promise.all(offers).then((made) => /** @type {import('./peer-link.js').Signal[]} */ (made.filter(Boolean)))
  }

  /**
   * Tie prepared offers to the holders the coordinator handed them to, and
   * close the others.
   * @param {Record<string, unknown>} offered the lookup reply's: cid by peer id
   * @param {Route} [route] the one the lookup went by: the connections' signals go that way
   */
  bind (offered, route = this.#options.signaling) {
    const peerOf = new Map(Object.entries(offered).map(([peer, cid]) => [cid, peer]))
    for (const [cid, { link }] of this.unbound) {
      const peer = peerOf.get(cid)
      if (typeof peer === 'string' && !this.reaching(peer)) this.#bindOne(peer, cid, route)
      else link.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, 'offer not handed out'))
    }
  }

  /**
   * @param {string} peer
   * @param {string} cid one of `unbound`
   * @param {Route} [route] the lookup's (none: the route the offer was made for)
   */
  #bindOne (peer, cid, route) {
    const { link, unsent } = /** @type {{ link: PeerLink, unsent: object[] }} */ (this.unbound.get(cid))
    this.unbound.delete(cid)
    link.peer = peer
    if (route) this.#routes.set(link, route)
    this.links.delete(` ${cid}`)
    this.links.set(`${peer} ${cid}`, link)
    const via = /** @type {Route} */ (this.#routes.get(link))
    this.introduce([peer], via)
    for (const signal of unsent) via.send({ type: 'connect', to: peer, signal })
    this.#reach(peer, link)
  }

  /**
   * Holders the worker invited for this page before its script ran (`invited`): each makes the
   * offer for the connection `cid`, sent the worker's way, and the page answers it. Until then a
   * request for such a holder waits for that connection (as for one of our own offers), not a new one.
   * A holder from before invitations ignores one: when its offer has not come within half the
   * pass-over, the page makes its own, the same way, and the requests waiting for the holder wait
   * for that one (no fault: nothing says the holder could not open a channel).
   * @param {Record<string, unknown>} offered cid by peer id, as the worker's lookup reply says
   * @param {Route} route the worker's
   */
  invited (offered, route) {
    for (const [peer, cid] of Object.entries(offered)) {
      if (typeof cid !== 'string' || this.reaching(peer) || this.links.size >= MAX_LINKS) continue
      const link = this.#createLink(peer, cid, false, route)
      // Timed once its offer comes, as one of our own offers is once the lookup has handed it out.
      this.#untimed.add(link)
      setTimeout(() => this.#untimed.delete(link) && link.close(UNANSWERED), channelPassOverMs(this.#options.config.connectTimeoutMs) / 2)
      this.#reach(peer, link, false, (err) => {
        if (err !== UNANSWERED) throw err
        return this.#reach(peer, this.#createLink(peer, newCid(), true, route))
      })
    }
  }

  /**
   * @param {string} peer
   * @param {string} cid
   * @param {boolean} initiator
   * @param {Route} route where its signals go
   */
  #createLink (peer, cid, initiator, route) {
    const { config } = this.#options
    const key = `${peer} ${cid}`
    /** @type {object[]} candidates of an offer not yet handed to a peer (prepare) */
    const unsent = []
    const link = new PeerLink({
      peer,
      cid,
      initiator,
      ice: route.ice,
      RTCPeerConnection: this.#options.env?.RTCPeerConnection,
      timeoutMs: config.connectTimeoutMs,
      signal: (signal) => {
        // Not handed to a peer yet: its offer goes with a lookup, its candidates once it is (bind).
        if (!link.peer) {
          if (!signal.sdp) unsent.push(signal)
        } else if (signal.sdp?.type === 'offer') {
          // The coordinator acknowledges the offer (`relayed`); a refusal (peer
          // gone) or no answer at all fails the attempt now, not at the link's timeout.
          /** @type {Route} */ (this.#routes.get(link)).request({ type: 'connect', to: link.peer, signal }, config.connectTimeoutMs)
            .catch((err) => link.close(err))
        } else {
          /** @type {Route} */ (this.#routes.get(link)).send({ type: 'connect', to: link.peer, signal })
        }
      },
      onClose: () => {
        this.links.delete(`${link.peer} ${cid}`)
        this.unbound.delete(cid)
      }
    })
    this.#routes.set(link, route)
    this.links.set(key, link)
    if (!peer) this.unbound.set(cid, { link, unsent })
    for (const s of this.early.get(key) ?? []) link.handle(s)
    this.early.delete(key)
    return link
  }

  /**
   * @param {PeerLink} link
   * @param {RTCDataChannel} channel
   */
  #attach (link, channel) {
    const transfer = new Transfer(channel, {
      serve: this.#options.serve,
      stallMs: this.#options.config.stallMs,
      onServed: (hash, bytes) => this.#options.onServed(link.peer, hash, bytes),
      onClose: (err) => {
        this.#transfers.delete(transfer)
        if (this.#open.get(link.peer) === transfer) this.#open.delete(link.peer)
        link.close(err)
      }
    })
    channel.onmessage = null
    for (const data of link.held.splice(0)) transfer.onMessage(data)
    this.#transfers.add(transfer)
    const current = this.#open.get(link.peer)
    if (!current?.open) this.#open.set(link.peer, transfer)
    return transfer
  }

  /** Close the open channel that has been idle longest; false if none is idle. */
  #closeIdlest () {
    /** @type {Transfer | null} */
    let idlest = null
    for (const t of this.#transfers) if (t.idle && (!idlest || t.lastActive < idlest.lastActive)) idlest = t
    idlest?.close(new Error('closed to make room'))
    return idlest !== null
  }

  /**
   * @param {string} from
   * @param {IncomingSignal} signal
   * @param {boolean} [introduced] the coordinator says a lookup introduced `from` to us (or us to it):
   *   an offer is answered only then, and only while we serve
   */
  #onSignal (from, signal, introduced = false) {
    if (typeof signal.cid !== 'string') return
    // An answer to an offer a lookup carried, ahead of the lookup's reply: it is from the holder it went to.
    if (signal.sdp?.type === 'answer' && this.unbound.has(signal.cid) && !this.reaching(from)) this.#bindOne(from, signal.cid)
    const key = `${from} ${signal.cid}`
    const link = this.links.get(key)
    if (link) {
      if (signal.sdp?.type === 'offer' && this.#untimed.delete(link)) this.#timeFrom(link)
      link.handle(signal)
      return
    }
    // An offer to answer, or an invitation to make one (a page's worker asks its holders to, before
    // the page's script runs: worker-socket.js `lookup`): only from a peer introduced to us, and only while we serve.
    const invite = signal.invite === true
    if (signal.sdp?.type === 'offer' || invite) {
      if (!introduced || !(this.#options.serving?.() ?? true)) return
      if (this.links.size >= MAX_LINKS && !this.#closeIdlest()) return
      const incoming = this.#createLink(from, signal.cid, invite, this.#options.signaling)
      incoming.opened.then((channel) => {
        this.#options.reach?.opened()
        this.#attach(incoming, channel)
      }, () => {})
      if (!invite) incoming.handle(signal)
      return
    }
    // A candidate ahead of its offer (possible across coordinator shards): keep a few briefly.
    const early = this.early.get(key) ?? []
    if (signal.candidate && early.length < 32 && (early.length || this.early.size < 64)) {
      if (!early.length) setTimeout(() => this.early.delete(key), 10000)
      early.push(signal)
      this.early.set(key, early)
    }
  }
}
