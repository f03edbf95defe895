/**
 * One asset from other visitors: lookup → connect → request → verify. Each
 * call starts at the next of the holders it is handed, so a page's loads run
 * over all of them at once. Peer bytes count only once their SHA-256 matches;
 * a mismatch counts as a rejection. A holder that sends nothing for the hedge
 * deadline is passed over for the next one (the origin is asked meanwhile)
 * and asked last from then on; so is one much slower than the page's other
 * holders, to open its channel or to answer (policy/hedge-rule.js passOverMs), well
 * before the deadline. A peer that sends bad bytes, does not
 * open a channel within a fifth of connectTimeoutMs or stalls is reported to
 * the coordinator, dropped and not asked again this session; one that says
 * `miss` is reported and moved past. With no coordinator to ask (none
 * configured, refused, or every one unreachable) it gives up at once, so the
 * load goes to the origin without waiting.
 */
import { CLIENT_ERRORS, LIMITS, MayghError, matches } from '../../protocol/index.js'
import { PeerSlots, WINDOW_BYTES } from './peer-slots.js'
import { TurnBatch } from './turn-batch.js'
import { channelPassOverMs, outrun, passOverMs, smooth } from '../../policy/hedge-rule.js'

/** @typedef {{ bytes: Uint8Array<ArrayBuffer>, type: string, peer: string }} PeerAsset */

export class PeerFetch {
  /** @type {ConstructorParameters<typeof PeerFetch>[0]} */
  #options
  /** @type {Set<string>} peers not asked again this session: they sent bad bytes, never opened a channel or stalled */
  banned = new Set()
  /** @type {Set<string>} peers reported to the coordinator */
  #reported = new Set()
  /** @type {Set<string>} peers that sent nothing for a hedge deadline: asked after the others */
  quiet = new Set()
  /**
   * Peers that have left (their channel closed, or the coordinator no longer knows them): not
   * asked again this page, though a lookup made before they left still names them (holdersOf).
   * @type {Set<string>}
   */
  #gone = new Set()
  /** requests that asked peers so far: where in its holder list the next one starts */
  #turn = 0
  /** whether this page has tried a channel while unreached (reach.js) */
  #probed = false
  /** whether a lookup of this page has carried offers (protocol 3: the first that may), or its worker invited holders to make them */
  #offered = false
  /** @type {Map<string, { at: number, peers: unknown[] }>} holders the worker's lookups named before this page's script ran, by asset, and when (invited): used as a pieced asset's are */
  #found = new Map()
  /**
   * Whether this page's lookups are expected to find holders, so that its first carries offers
   * (made beforehand when they can be): always where the page asks for itself; in transparent mode
   * once its worker says it will ask this page for peer bytes (`expect`). Until then a lookup goes
   * without: a first visitor's page, whose lookups find nobody, makes no offers at all (100–130 ms
   * of a slow phone's main thread), and one that finds holders unforeseen reaches them by `connect`.
   */
  #expected
  /** @type {Promise<import('./peer-link.js').Signal[]> | undefined} offers for it made before the page joined */
  #offers
  /**
   * The lookups a page asks for in one turn, as one `lookup {hashes}`, by the route chosen as it
   * opens (#route); the page's first carries offers, made with the ICE servers the welcome named
   * (or an earlier page's) while it gathers.
   * @type {TurnBatch<{ route: import('./peer-pool.js').Route, offers: Promise<import('./peer-link.js').Signal[]> | null }, any>}
   */
  #lookups
  /**
   * Which holder's channel carries each request, and when (peer-slots.js): holders that went quiet on
   * this page asked last, those with a channel open or opening first, then the one that owes least.
   */
  #slots = new PeerSlots({
    spare: (peer) => this.#spare(peer),
    rank: (peer) => this.#rank(peer),
    // What a channel carries in a round trip, so that a far holder's replies too follow each other
    // without a gap. No more: what one channel has taken, another that ends sooner cannot.
    window: () => Math.max(WINDOW_BYTES, (this.#peerRate ?? 0) * (this.#turnMs ?? 0))
  })

  /** @type {Set<{ peers: string[], bytes: number, go: (peer: string) => void }>} requests waiting for a holder's channel to open, their other holders, and their size */
  #unopened = new Set()
  /** @type {Map<string, PartHolders>} pieced assets' holders, by asset, as last looked up (holdersOf) */
  #partHolders = new Map()
  /**
   * How long this page's holders took to send a request's first byte,
   * smoothed (ms, null before any did): a holder much slower than that is
   * passed over (policy/hedge-rule.js passOverMs), as is a channel much slower to
   * open than the page's others (PeerPool.openPace).
   * @type {number | null}
   */
  answerPace = null
  /**
   * The rate this page's holders send a reply at once its first byte has
   * come, smoothed (bytes per ms, null before any reply was whole).
   * @type {number | null}
   */
  #peerRate = null
  /**
   * How long a request sent on an idle channel took to bring its reply's
   * first byte, smoothed (ms, null before any did): a round trip and the
   * holder's read.
   * @type {number | null}
   */
  #turnMs = null

  /**
   * @param {object} o
   * @param {import('./signaling.js').Signaling} o.signaling
   * @param {import('./worker-route.js').WorkerRoute | null} [o.relay] the worker's socket (transparent mode): the page's
   *   lookups go that way until its own socket has joined
   * @param {import('./peer-pool.js').PeerPool} o.pool
   * @param {import('./stats.js').Stats} o.stats
   * @param {Promise<unknown>} o.ready resolves when joined or given up
   * @param {{ lookupTimeoutMs: number, connectTimeoutMs: number, quotaMb: number }} o.config
   * @param {import('./reach.js').Reach} [o.reach] whether this visitor's channels open at all: while they do not, its requests race the origin at once
   * @param {boolean} [o.verifiedLater] the caller verifies what it is handed and reports a mismatch ({@link mismatch}):
   *   transparent mode's worker does, off the page's main thread (SHA-256 of a page's images took 57 ms of it)
   */
  constructor (o) {
    this.#options = o
    this.#expected = !o.relay
    this.#lookups = new TurnBatch(LIMITS.maxLookupHashes, () => {
      const route = this.#route()
      // Offers made beforehand serve either route: each is tied to the route its lookup went by (PeerPool.bind).
      const offers = this.#offered || !this.#expected ? null : this.#offers ?? o.pool.prepare(OFFERS, route)
      if (offers) this.#offered = true
      return { route, offers }
    }, (hashes, { route, offers }) => this.#lookup(hashes, offers, route))
    // The worker's socket came up (its ICE servers are known now): offers for a page it will ask, made now.
    o.relay?.on('up', () => this.#warm())
  }

  /**
   * The worker will ask this page for peer bytes (transparent mode: its lookup or `/held` check named a
   * holder of something the page requested, or could not tell): its first lookup carries offers, made now,
   * while the page is still parsed, so that the lookup does not wait for them (several tens of ms on
   * a busy page).
   */
  expect () {
    this.#expected = true
    this.#warm()
  }

  /**
   * What the worker's lookup found before this page's script ran, and the holders it invited to make
   * offers for this page (`invited`): the page's loads of those assets go to those holders without a
   * lookup of their own, and once holders were invited its lookups carry no offers.
   * @param {Record<string, unknown>} found holders by asset
   * @param {Record<string, unknown>} offered the invited holders' connection ids, by peer id
   */
  invited (found, offered) {
    const { pool, relay } = this.#options
    if (!relay?.joined) return
    /** @type {unknown[]} */
    const named = []
    for (const [hash, peers] of Object.entries(found)) {
      if (!Array.isArray(peers)) continue
      this.#found.set(hash, { at: performance.now(), peers })
      named.push(...peers)
    }
    // Introduced to the worker's peer id: connections to them signal that way.
    pool.introduce(/** @type {string[]} */ (named.filter((p) => typeof p === 'string')), relay)
    if (!Object.keys(offered).length) return
    this.#offered = true
    pool.invited(offered, relay)
  }

  /** Make the first lookup's offers now, if expected, the ICE servers are known and they are not made yet. */
  #warm () {
    const { signaling, relay, pool } = this.#options
    const route = relay?.joined ? relay : signaling
    if (this.#expected && !this.#offered && !this.#offers && (route === relay || signaling.ice.iceServers?.length)) this.#offers = pool.prepare(OFFERS, route)
  }

  /**
   * The way a lookup goes: the page's own socket once it has joined, or while
   * its join is on its way and the worker's socket is not up; else the
   * worker's, which has joined already.
   * @returns {import('./peer-pool.js').Route}
   */
  #route () {
    const { signaling, relay } = this.#options
    return !signaling.joined && relay?.joined ? relay : signaling
  }

  /**
   * How a holder ranks for a request (lower first): those that went quiet on this page before are
   * asked last; those with a channel open or opening first.
   * @param {string} peer
   */
  #rank (peer) {
    return 2 * Number(this.quiet.has(peer)) - Number(this.#options.pool.reaching(peer))
  }

  /**
   * How long a holder asked now would take to send `size` bytes whole, by
   * this page's pace so far (null before any holder answered).
   * @param {number} size
   */
  #expectedMs (size) {
    return this.answerPace === null ? null : this.answerPace + (this.#peerRate ? size / this.#peerRate : 0)
  }

  /**
   * @param {string} url for events
   * @param {{ hash: string, size?: number, of?: string }} name `of`: the pieced asset `hash` is a part
   *   of (protocol/pieces.js): its holders are asked, and reported for what they do wrong
   * @param {import('./loader.js').PeerHow} how
   * @returns {Promise<PeerAsset | null>} verified bytes, or null when no peer gave them
   */
  get (url, name, how) {
    // While it is one the page needs now, requests below the fold take no idle channel (peer-slots.js);
    // not for a pieced asset's parts: a video's read-ahead would hold them back for as long as it plays.
    const end = name.of ? null : this.#slots.begin(how.priority)
    const got = this.#get(url, name, how)
    if (end) got.then(end, end)
    return got
  }

  /**
   * @param {string} url
   * @param {{ hash: string, size?: number, of?: string }} name
   * @param {import('./loader.js').PeerHow} how
   * @returns {Promise<PeerAsset | null>}
   */
  async #get (url, { hash: part, size, of }, { signal, onBytes, deadline, priority, originMs, race }) {
    const { stats, pool, config } = this.#options
    // What is looked up, and reported; `part` is what is asked for, and verified.
    const hash = of ?? part
    const holders = of ? await this.#holdersOf(of, url) : await this.holders(hash, url)
    // This visitor's channels have not been opening (reach.js): the origin now, the holders all the same
    // (a channel that opens clears it). Not where the site prefers savings: its deadline is none.
    if (holders.length && deadline() < Infinity && this.#options.reach?.unreached()) {
      race()
      // The origin will likely win before any holder is asked: one channel a page is tried all the same.
      if (!this.#probed) pool.transfer(holders[0]).catch(() => {})
      this.#probed = true
    }
    const turn = this.#turn++ % (holders.length || 1)
    // Each request starts at the next holder; among them the slots rank (#rank) and weigh (bytes owed).
    const order = [...holders.slice(turn), ...holders.slice(0, turn)]
    /** @type {Set<string>} */
    const tried = new Set()
    // The first holder handed the request over an open channel starts the hedge's quiet time again
    // (policy/hedge-rule.js): the time to find it and open the channel is spent, the holder's answer is to come.
    let asked = false
    /** @type {string | null} a slot on an open channel handed to this request while it waited for another (spare) */
    let handed = null
    // What its slot counts it as owing its holder's channel (peer-slots.js): a size not known, a full window.
    const bytes = size ?? WINDOW_BYTES
    for (;;) {
      // Requests started together share their holders: one may have failed another meanwhile.
      const left = order.filter((p) => !tried.has(p) && !this.banned.has(p) && !this.#gone.has(p))
      if (handed !== null && (signal.aborted || !left.includes(handed))) {
        this.#slots.give(handed, bytes)
        handed = null
      }
      if (signal.aborted || !left.length) return null
      // The best of them whose channel takes a request (peer-slots.js), the page's most urgent requests first.
      const peer = handed ?? await this.#slots.take(left, priority, { signal, onBytes, bytes })
      handed = null
      if (peer === null) return null
      tried.add(peer)
      const others = left.length > 1
      /** bytes of its reply still to come from `peer`, as its slot counts them */
      let unsent = bytes
      let asset
      try {
        if (signal.aborted) return null
        const attempt = pool.transfer(peer)
        // Every request waiting for one channel is released at once: timed from the attempt's start,
        // read again at each check (a connection to a holder invited for the page is timed only once
        // its offer has come: PeerPool.invited), else from now.
        const now = performance.now()
        const since = () => pool.reachingSince(peer) ?? now
        // Reported whenever it fails, even after this request has moved on.
        attempt.catch((err) => this.#report(peer, hash, FAULTS[err.code]))
        // A channel not open within a fifth of connectTimeoutMs counts as not opened: reported,
        // dropped, and the next holder tried (the page does not wait out the timeout). One much
        // slower than the page's other channels is left sooner, and kept: it may still open.
        const cap = channelPassOverMs(config.connectTimeoutMs)
        const wait = overdue(now, () => since() - now + (others ? passOverMs(cap, pool.openPace) : cap))
        // Meanwhile a slot freed on another of its holders' open channels takes it there (spare).
        /** @type {{ peers: string[], bytes: number, go: (to: string) => void }} */
        const move = { peers: left.filter((p) => p !== peer), bytes, go: () => {} }
        /** @type {Promise<typeof MOVED>} */
        const moved = new Promise((resolve) => {
          move.go = (to) => {
            handed = to
            resolve(MOVED)
          }
        })
        if (others) this.#unopened.add(move)
        const transfer = await Promise.race([attempt, wait.promise.then(() => null), moved]).finally(() => {
          wait.stop()
          this.#unopened.delete(move)
        })
        // Not a fault: it may yet open (and is asked again by the page's other requests).
        if (transfer === MOVED) continue
        // Its channel opened as a slot was handed to it elsewhere: that slot goes back.
        if (handed !== null) {
          this.#slots.give(handed, bytes)
          handed = null
        }
        if (!transfer) {
          if (performance.now() - since() >= cap) throw new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_TIMEOUT, 'passed over')
          // Reported (the operator's figures; it quarantines nobody), not dropped: it may yet open.
          this.#report(peer, hash, 'no_channel', false)
          this.quiet.add(peer)
          this.#slots.avoid(peer)
          continue
        }
        // The origin may have won while the channel opened: then the holder is asked nothing. Nor
        // is it when the page's pace says it would lose the race anyway (policy/hedge-rule.js outrun):
        // the origin at once.
        if (signal.aborted || outrun(this.#expectedMs(size ?? 0), deadline(), originMs())) return null
        // The last holder is waited for however quiet (the origin is asked meanwhile).
        const quietMs = () => others ? passOverMs(deadline(), this.answerPace) : Infinity
        if (!asked) onBytes()
        asked = true
        const own = (/** @type {number} */ n) => {
          const counted = Math.min(n, unsent)
          unsent -= counted
          this.#slots.sent(peer, counted)
        }
        asset = await this.#request(transfer, peer, part, size ?? config.quotaMb << 20, { signal, onBytes, quietMs, own })
      } catch (err) {
        if (GONE.has(err.code)) this.#gone.add(peer)
        // A peer's fault (a channel not open in time, a stall, …) counts whether or not the origin
        // has won meanwhile; the request's own abort is none.
        this.#report(peer, hash, FAULTS[err.code])
        if (signal.aborted) return null
        if (err !== QUIET) stats.error({ url, hash, code: err.code, message: String(err.message) })
        continue
      } finally {
        this.#slots.give(peer, unsent, priority)
      }
      if (!this.#options.verifiedLater && !(await matches(asset.bytes, part))) {
        this.mismatch(url, hash, peer)
        continue
      }
      return { ...asset, peer }
    }
  }

  /**
   * `peer` sent bytes that fail verification: counted, reported, and not asked again this session.
   * @param {string} url for events
   * @param {string} hash the asset (a pieced asset's own, for a part of it)
   * @param {string} peer
   */
  mismatch (url, hash, peer) {
    this.#options.stats.rejected({ url, hash, peer })
    this.#report(peer, hash, 'hash_mismatch')
  }

  /**
   * A slot on `peer`'s channel is free: if that channel is open, the oldest
   * request still waiting for another holder's channel to open that `peer`
   * also holds for takes it (before the requests waiting for a slot: it got
   * its own earlier). A holder whose channel never opens (a liar, a NAT
   * nobody reaches) then keeps a request only until an open channel frees a
   * slot, not for the pass-over.
   * @param {string} peer
   * @returns {number | null} the bytes of the request that took it (null: none did)
   */
  #spare (peer) {
    if (!this.#unopened.size || !this.#options.pool.connected().includes(peer)) return null
    for (const w of this.#unopened) {
      if (!w.peers.includes(peer)) continue
      this.#unopened.delete(w)
      w.go(peer)
      return w.bytes
    }
    return null
  }

  /**
   * One request on an open channel, cancelled (and the peer noted as quiet)
   * when no byte has arrived on the channel for `quietMs()` since it was sent
   * (read again at each check: the page's pace changes as its holders answer).
   * Bytes for requests queued ahead of this one count: the peer is busy, not
   * quiet; and once bytes flow, a transfer is not passed over (what it has
   * sent would be thrown away), only the stall timeout ends it. Quiet is not
   * a fault (a slow uplink is not a lie): the peer is not reported, only asked
   * after the others from now on, while the stall timeout still catches the
   * peer that stops altogether.
   * @param {import('./transfer.js').Transfer} transfer
   * @param {string} peer
   * @param {string} hash
   * @param {number} maxBytes
   * @param {{ signal: AbortSignal, onBytes: () => void, quietMs: () => number, own: (bytes: number) => void }} how `own`: on each frame of its own reply
   */
  async #request (transfer, peer, hash, maxBytes, { signal, onBytes, quietMs, own }) {
    const attempt = new AbortController()
    const stop = () => attempt.abort(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    const sent = performance.now()
    const wait = overdue(sent, quietMs)
    wait.promise.then((late) => {
      if (!late) return
      this.quiet.add(peer)
      // Requests waiting for it that have another holder no longer wait for it.
      this.#slots.avoid(peer)
      attempt.abort(QUIET)
    })
    let answered = false
    /** @type {number | undefined} when the first byte of its own reply came */
    let replying
    const idle = transfer.idle
    try {
      const asset = await transfer.request(hash, maxBytes, {
        signal: attempt.signal,
        onBytes: (n, mine) => {
          if (mine) {
            if (replying === undefined && idle) this.#turnMs = smooth(this.#turnMs, performance.now() - sent)
            replying ??= performance.now()
            own(n)
          }
          if (!answered) {
            answered = true
            wait.stop()
            this.answerPace = smooth(this.answerPace, performance.now() - sent)
          }
          this.#slots.busy(peer)
          onBytes()
        }
      })
      // Timed from its own first frame (those before it were other replies'); a reply that came
      // in one read says nothing about the rate.
      const ms = performance.now() - (replying ?? performance.now())
      if (asset.bytes.length > 0 && ms > 1) this.#peerRate = smooth(this.#peerRate, asset.bytes.length / ms)
      return asset
    } finally {
      wait.stop()
      signal.removeEventListener('abort', stop)
    }
  }

  /**
   * Tell the coordinator a peer failed us (it counts reports of enough
   * visitors into a quarantine), and ask that peer nothing more this session,
   * unless it only lacked this one asset.
   * @param {string} peer
   * @param {string} hash
   * @param {string | undefined} reason a REPORT_REASONS value; none: not the peer's fault (e.g. our coordinator went)
   * @param {boolean} [ban] ask it nothing more (default: unless it only lacked this asset)
   */
  #report (peer, hash, reason, ban = reason !== 'miss') {
    if (!reason) return
    if (ban && !this.banned.has(peer)) {
      this.banned.add(peer)
      this.#options.pool.drop(peer)
      this.#slots.drop(peer)
    }
    // Once per peer and page: the coordinator counts one per visitor anyway.
    if (this.#reported.has(peer)) return
    this.#reported.add(peer)
    // By the route that introduced it (its coordinator checks the introduction).
    this.#options.pool.routeOf(peer).send({ type: 'report', peer, hash, reason })
  }

  /**
   * One `lookup` for the hashes a page asked for in one turn.
   * @param {string[]} hashes
   * @param {Promise<import('./peer-link.js').Signal[]> | null} offers the page's first lookup carries them (protocol 3)
   * @param {import('./peer-pool.js').Route} route the page's own socket, or its worker's
   */
  async #lookup (hashes, offers, route) {
    const { signaling, pool } = this.#options
    // Offers not made by now go unused: the lookup does not wait on them.
    const made = offers && await Promise.race([offers, new Promise((resolve) => setTimeout(resolve, OFFER_WAIT_MS, []))])
    const lookup = { type: 'lookup', hashes, connected: pool.connected().slice(0, LIMITS.maxConnected), offers: made?.length ? made : undefined }
    // Its own socket's may follow the join on its way, and is sent again after a lost socket's next welcome.
    return route.request(lookup, this.#options.config.lookupTimeoutMs, { retry: true, afterJoin: true }).then((reply) => {
      // The holders it names were introduced to the worker's peer id: connections to them signal that way.
      if (route !== signaling) pool.introduce(Object.values(reply?.found ?? {}).flat().filter((p) => typeof p === 'string'), route)
      if (offers) pool.bind(reply?.offered ?? {}, route)
      return reply
    }, (err) => {
      if (offers) pool.bind({}, route)
      throw err
    })
  }

  /** Resolves once a join is on its way (Signaling's `joining`). */
  #joinSent () {
    const { signaling } = this.#options
    return new Promise((resolve) => {
      const sent = () => {
        signaling.off('joining', sent)
        resolve(undefined)
      }
      signaling.on('joining', sent)
      this.#options.ready.then(sent)
    })
  }

  /**
   * The holders of a pieced asset, for its parts: looked up once for all the
   * parts a page asks for within PART_HOLDERS_MS (a video's pieces, one after
   * the other), less those found bad since. A lookup that named nobody (none
   * held it, or it failed) is asked again after PART_NONE_MS: a holder may
   * have come meanwhile, and each of the video's pieces would go to the
   * origin until then.
   * @param {string} hash the asset's
   * @param {string} url for events
   * @returns {Promise<string[]>}
   */
  async #holdersOf (hash, url) {
    const now = performance.now()
    let known = this.#partHolders.get(hash)
    if (!known || now - known.at > (known.found?.length === 0 ? PART_NONE_MS : PART_HOLDERS_MS)) {
      /** @type {PartHolders} */
      const entry = known = { at: now, holders: this.holders(hash, url).then((found) => (entry.found = found)) }
      this.#partHolders.set(hash, entry)
      if (this.#partHolders.size > PART_ASSETS_KEPT) this.#partHolders.delete(/** @type {string} */ (this.#partHolders.keys().next().value))
    }
    return (await known.holders).filter((p) => !this.banned.has(p) && !this.#gone.has(p))
  }

  /**
   * Peers the coordinator names as holders; none when there is no
   * coordinator to ask, on timeout or on any error, such as
   * MGH_ERR_RATE_LIMITED. The lookups a page asks for in one turn (its
   * images, as the page or the worker asks for them) go out as one message
   * (`hashes`, at most maxLookupHashes). A lookup is safe to repeat: one cut
   * off by a lost coordinator is asked again of the next one joined, within
   * the same timeout. A lookup that fails for a reason other than having no
   * coordinator (it timed out, the coordinator refused it) counts as an
   * error of the load.
   * @param {string} hash
   * @param {string} [url] for events
   * @returns {Promise<string[]>}
   */
  async holders (hash, url = '') {
    const { signaling, pool, relay } = this.#options
    const found = this.#found.get(hash)
    if (found && performance.now() - found.at < PART_HOLDERS_MS) return this.#named(found.peers)
    // Not joined yet, and the worker's socket is: the lookup goes that way at once.
    if (!signaling.joined && !(relay?.joined && !signaling.stopped)) {
      if (signaling.stopped || signaling.unreachable()) return []
      // With the ICE servers an earlier page was told (the offers need them), the page's offers are
      // made now and its lookup follows its join at once: one round trip to the coordinator, not two.
      // Else the welcome tells them.
      if (!signaling.ice.iceServers?.length) await this.#options.ready
      else {
        if (this.#expected && !this.#offered) this.#offers ??= pool.prepare(OFFERS)
        if (!signaling.joining) await Promise.race([this.#options.ready, this.#joinSent()])
      }
      if (!signaling.joined && !signaling.joining) return []
    }
    try {
      const peers = (await this.#lookups.add(hash)).found?.[hash]
      return this.#named(Array.isArray(peers) ? peers : [])
    } catch (err) {
      const code = /** @type {any} */ (err)?.code
      if (code !== CLIENT_ERRORS.MGH_ERR_OFFLINE.code) this.#options.stats.error({ url, hash, code: code ?? CLIENT_ERRORS.MGH_ERR_REQUEST_TIMEOUT.code, message: `lookup: ${/** @type {any} */ (err)?.message ?? err}` })
      return []
    }
  }

  /**
   * @param {unknown[]} peers as a lookup named them
   * @returns {string[]} those that may be asked: neither this page nor its worker, nor banned
   */
  #named (peers) {
    const { signaling, relay } = this.#options
    return /** @type {string[]} */ (peers.filter((p) => typeof p === 'string' && p !== signaling.id && p !== relay?.id && !this.banned.has(p)))
  }
}

/** @typedef {{ at: number, holders: Promise<string[]>, found?: string[] }} PartHolders a pieced asset's lookup: when, and its answer (`found` once it came) */

/** How long the holders a lookup named for a pieced asset serve its parts (ms), and those its worker's named serve a page. */
const PART_HOLDERS_MS = 10000
/** …and how long a lookup that named none does (ms). */
const PART_NONE_MS = 1000
/** Pieced assets whose holders are kept so, at most. */
const PART_ASSETS_KEPT = 16

/** Offers the page's first lookup carries (protocol 3): channels to that many holders start with the lookup. */
const OFFERS = 3
/** How long the first lookup waits for its offers to be made, at most (ms): a few ms each in a browser. */
const OFFER_WAIT_MS = 50

/** How often a wait whose limit may change (overdue) looks at it again, ms at most. */
const RECHECK_MS = 50

/**
 * A wait for `limit()` ms from `since`, the limit read again at each check
 * (what the page knows of its peers' pace changes meanwhile).
 * @param {number} since performance.now() when the wait began
 * @param {() => number} limit ms (Infinity: until stopped)
 * @returns {{ promise: Promise<boolean>, stop: () => void }} `promise`: true once the limit has passed;
 *   false once stopped first
 */
function overdue (since, limit) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  /** @type {(late: boolean) => void} */
  let end = () => {}
  const promise = new Promise((resolve) => { end = resolve })
  const check = () => {
    const left = limit() - (performance.now() - since)
    if (left <= 0) end(true)
    else timer = setTimeout(check, Math.min(left, RECHECK_MS))
  }
  check()
  return {
    promise: /** @type {Promise<boolean>} */ (promise),
    stop: () => {
      clearTimeout(timer)
      end(false)
    }
  }
}

/** A request given up because its holder sent nothing for the hedge deadline. */
const QUIET = new Error('the holder sent nothing for the hedge deadline')

/** A request waiting for a channel to open that went to another holder's open one instead (spare). */
const MOVED = Symbol('moved')

/** Errors that say the peer has left: its channel closed, or the coordinator knows no such peer. */
const GONE = new Set(['MGH_ERR_CHANNEL_CLOSED', 'MGH_ERR_UNKNOWN_PEER'])

/** The peer's failures a receiver reports, by the error they ended its attempt with. */
const FAULTS = /** @type {Record<string, string>} */ ({
  MGH_ERR_MISS: 'miss',
  MGH_ERR_STALL: 'stall',
  MGH_ERR_CONNECT_TIMEOUT: 'no_channel',
  MGH_ERR_CONNECT_FAILED: 'no_channel',
  MGH_ERR_PEER_PROTOCOL: 'hash_mismatch'
})
