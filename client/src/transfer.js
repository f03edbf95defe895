/**
 * The peer protocol on one open data channel (docs/protocol.md, "Peer
 * protocol"), both directions at once:
 *
 * - as receiver: `request(hash)` sends `get` and resolves with the reply's
 *   bytes. Replies come in request order, so the oldest pending request owns
 *   each `ok`/`miss` header and the binary frames after an `ok`. A request
 *   whose caller gives up (its signal aborts: the origin won) sends
 *   `cancel {cut: true}`, before its reply or during it; its reply, whatever
 *   it is, is read and dropped, and may end early with `cut`.
 * - as sender: incoming `get`s are answered one at a time, in arrival order
 *   (the next ones' bytes read from the store meanwhile), in ≤ 16 KiB frames, pausing while `bufferedAmount` is above HIGH_WATER until
 *   `bufferedamountlow` (LOW_WATER). A `cancel` for a request not yet started
 *   has it answered `miss` in its turn, unread; one being sent stops before its
 *   next frame and ends with `{t: 'cut', id}` when the cancel says `cut: true`
 *   (a receiver that does not say so reads replies whole: `cut` came with the
 *   flag, so an older receiver never meets it), and finishes otherwise. What
 *   is already in the channel's buffer goes anyway (up to HIGH_WATER): a cut
 *   saves the rest of a large reply, not a small one sent at once.
 *
 * Verification is the caller's job (loader.js): this module only frames.
 * Anything that desynchronises the stream (unexpected frame, wrong id, too
 * many bytes, a stall) closes the channel, since later frames could no longer
 * be attributed safely. Environment-neutral: needs only an RTCDataChannel-like
 * object, so it is unit-tested in Node.
 */
import { CLIENT_ERRORS, MayghError } from '../../protocol/index.js'

export const CHUNK_BYTES = 16384
/**
 * What a sender keeps in its channel's buffer (`bufferedAmount`): at most
 * HIGH_WATER, refilled once it has drained to LOW_WATER. Little, because
 * Chromium sends a deeply buffered channel slowly: one channel carrying 3.5 MB
 * moved 0.9 MB/s with 1 MiB kept in it against 10–15 MB/s with 64 KiB
 * (bench/channel-throughput.js), and what a cancel cannot stop any more is
 * what the buffer holds. Bytes in flight are SCTP's to count, not these: 32
 * KiB lasts 10 ms at 25 Mbit/s, the time a holder's page has to refill it.
 */
export const HIGH_WATER = 64 << 10
export const LOW_WATER = 32 << 10
/** How often a sender waiting for the buffer to drain looks at it, in case no `bufferedamountlow` comes. */
const DRAIN_POLL_MS = 20
/** our requests fail once their peer has sent nothing for this long (ms), unless TransferOptions.stallMs says otherwise */
const STALL_MS = 4000
/** requests from one peer queued at most; more closes the channel */
const MAX_QUEUED = 256
/** held assets are read this many requests ahead of the one being sent, so the channel does not wait on the store */
const READ_AHEAD = 2

/**
 * @typedef {{ bytes: Uint8Array<ArrayBuffer>, type: string }} Asset
 * @typedef {{ id: number, hash: string, maxBytes: number, resolve: (a: Asset) => void, reject: (e: Error) => void, buf?: Uint8Array<ArrayBuffer>, size: number, got: number, type?: string, onBytes?: (n: number, own: boolean) => void, cancelled?: boolean }} Pending `cancelled`: we sent `cancel {cut}`, so its reply may end with `cut`
 * @typedef {{ id: number, hash: string, cancelled?: boolean, read?: Promise<Asset | null> }} Queued `read`: the held asset, once asked for
 * @typedef {object} TransferOptions
 * @property {(hash: string) => Promise<Asset | null>} serve the held asset, verified, or null
 * @property {number} [stallMs] give up on our requests after this long without a message
 * @property {(hash: string, bytes: number) => void} [onServed]
 * @property {(err: Error) => void} [onClose]
 */

export class Transfer {
  /** @type {RTCDataChannel} */
  #channel
  /** @type {TransferOptions} */
  #options
  /** @type {Pending[]} our requests awaiting replies, oldest first */
  #pending = []
  /** @type {Queued[]} their requests awaiting our replies */
  #queue = []
  #nextId = 1
  #serving = false
  /** the request whose reply is being sent (0: none), and whether its receiver asked us to cut it short */
  #sending = 0
  #cut = false
  /** when we last asked or heard anything: for closing the least recently used channel, and the stall clock */
  lastActive = Date.now()
  /** @type {Error | null} */
  #closed = null
  /** @type {ReturnType<typeof setTimeout> | undefined} the stall check, while one is due */
  #timer

  /**
   * @param {RTCDataChannel} channel an open channel
   * @param {TransferOptions} options
   */
  constructor (channel, options) {
    this.#channel = channel
    this.#options = options
    channel.binaryType = 'arraybuffer'
    channel.bufferedAmountLowThreshold = LOW_WATER
    channel.addEventListener('message', (e) => this.onMessage(/** @type {MessageEvent} */ (e).data))
    channel.addEventListener('close', () => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CHANNEL_CLOSED)))
  }

  get open () {
    return this.#closed === null
  }

  /** Nothing pending either way. */
  get idle () {
    return !this.#pending.length && !this.#queue.length && !this.#serving
  }

  /**
   * Ask the peer for an asset.
   * @param {string} hash
   * @param {number} [maxBytes] refuse a reply larger than this
   * @param {{ signal?: AbortSignal, onBytes?: (n: number, own: boolean) => void }} [o]
   *   `signal`: give up (rejects with its reason, sends `cancel`); `onBytes`: called with the size of each frame that
   *   arrives on the channel while the request is pending (`own`: of its reply, else of a request before it)
   * @returns {Promise<Asset>}
   */
  request (hash, maxBytes = 512 << 20, { signal, onBytes } = {}) {
    if (this.#closed) return Promise.reject(this.#closed)
    return new Promise((resolve, reject) => {
      const id = this.#nextId++
      this.lastActive = Date.now()
      /** @type {Pending} */
      const p = { id, hash, maxBytes, resolve, reject, size: 0, got: 0, onBytes }
      this.#pending.push(p)
      this.#send(JSON.stringify({ t: 'get', id, hash }))
      this.#armStall()
      signal?.addEventListener('abort', () => {
        if (!this.#pending.includes(p)) return
        // Still owed a reply, which is read as usual and dropped (and may be cut short).
        p.resolve = p.reject = () => {}
        p.onBytes = undefined
        p.cancelled = true
        this.#send(JSON.stringify({ t: 'cancel', id, cut: true }))
        reject(signal.reason)
      }, { once: true })
    })
  }

  /** @param {unknown} data */
  onMessage (data) {
    if (this.#closed) return
    this.lastActive = Date.now()
    this.#armStall()
    if (data instanceof ArrayBuffer) return this.#onChunk(new Uint8Array(data))
    if (typeof data !== 'string') return this.#fail('not an ArrayBuffer')
    let msg
    try { msg = JSON.parse(data) } catch { return this.#fail('not JSON') }
    const head = this.#pending[0]
    switch (msg?.t) {
      case 'get':
        if (!Number.isInteger(msg.id) || typeof msg.hash !== 'string') return this.#fail('bad get')
        if (this.#queue.length >= MAX_QUEUED) return this.#fail('too many requests')
        this.#queue.push({ id: msg.id, hash: msg.hash })
        this.#pump()
        return
      case 'cancel': {
        // Answered `miss` in its turn: replies stay in request order.
        const q = this.#queue.find((q) => q.id === msg.id)
        if (q) q.cancelled = true
        // Being sent: stopped before its next frame, if the receiver reads a `cut`.
        else if (msg.id === this.#sending && msg.cut === true) this.#cut = true
        return
      }
      case 'cut':
        // Only a reply we cancelled, once its header has come.
        if (!head?.buf || !head.cancelled || msg.id !== head.id) return this.#fail('unexpected cut')
        this.#pending.shift()
        this.#armStall()
        return
      case 'ok':
        if (!head || head.buf || msg.id !== head.id) return this.#fail('unexpected ok')
        if (!Number.isInteger(msg.size) || msg.size < 0 || msg.size > head.maxBytes) return this.#fail('bad size')
        // Grown as bytes come (onChunk), so a peer announcing a large size and sending nothing costs little.
        head.buf = new Uint8Array(Math.min(msg.size, 1 << 20))
        head.size = msg.size
        head.type = typeof msg.type === 'string' ? msg.type : ''
        if (msg.size === 0) this.#settle()
        return
      case 'miss':
        if (!head || head.buf || msg.id !== head.id) return this.#fail('unexpected miss')
        this.#pending.shift()
        head.reject(new MayghError(CLIENT_ERRORS.MGH_ERR_MISS))
        this.#armStall()
        return
      default:
        return this.#fail('unknown message')
    }
  }

  /** @param {Uint8Array} chunk */
  #onChunk (chunk) {
    const head = this.#pending[0]
    if (!head?.buf) return this.#fail('unexpected binary frame')
    const got = head.got + chunk.length
    if (got > head.size) return this.#fail('too many bytes')
    if (got > head.buf.length) {
      const grown = new Uint8Array(Math.min(head.size, Math.max(got, head.buf.length * 2)))
      grown.set(head.buf.subarray(0, head.got))
      head.buf = grown
    }
    head.buf.set(chunk, head.got)
    head.got = got
    // Requests queued behind this one are moving too.
    for (const p of this.#pending) p.onBytes?.(chunk.length, p === head)
    if (got === head.size) this.#settle()
  }

  #settle () {
    const head = /** @type {Pending} */ (this.#pending.shift())
    head.resolve({ bytes: /** @type {Uint8Array<ArrayBuffer>} */ (head.buf), type: /** @type {string} */ (head.type) })
    this.#armStall()
  }

  /** Answer queued requests one at a time, in order. */
  async #pump () {
    if (this.#serving) return
    this.#serving = true
    try {
      while (this.#queue.length && !this.#closed) {
        for (const q of this.#queue.slice(0, READ_AHEAD + 1)) if (!q.cancelled) q.read ??= this.#options.serve(q.hash).catch(() => null)
        const { id, hash, cancelled, read } = /** @type {Queued} */ (this.#queue.shift())
        this.#sending = id
        this.#cut = false
        // Cancelled while read: answered `miss`, as if cancelled in the queue.
        const asset = cancelled ? null : await /** @type {Promise<Asset | null>} */ (read).then((a) => this.#cut ? null : a)
        if (this.#closed) return
        if (!asset) {
          this.#sending = 0
          this.#send(JSON.stringify({ t: 'miss', id }))
          continue
        }
        const { bytes, type } = asset
        this.#send(JSON.stringify({ t: 'ok', id, size: bytes.length, type }))
        let at = 0
        for (; at < bytes.length && !this.#closed; at += CHUNK_BYTES) {
          if (this.#channel.bufferedAmount > HIGH_WATER) await this.#drained()
          if (this.#cut) break
          if (!this.#closed) this.#send(bytes.subarray(at, at + CHUNK_BYTES))
        }
        this.#sending = 0
        if (this.#cut && at < bytes.length) this.#send(JSON.stringify({ t: 'cut', id }))
        // What went out (a cut reply counts only its frames sent).
        if (!this.#closed) this.#options.onServed?.(hash, Math.min(at, bytes.length))
      }
    } finally {
      this.#serving = false
    }
  }

  /**
   * Resolves once `bufferedAmount` falls to the low-water mark, or the channel
   * closes. The buffer is also looked at every DRAIN_POLL_MS: node-webrtc
   * (`@roamhq/wrtc`, the Node peers') never fires `bufferedamountlow`, so a
   * Node peer serving more than its buffer would wait for it for ever.
   */
  #drained () {
    return new Promise((resolve) => {
      const done = () => {
        clearInterval(poll)
        this.#channel.removeEventListener('bufferedamountlow', done)
        this.#channel.removeEventListener('close', done)
        resolve(undefined)
      }
      const poll = setInterval(() => { if (this.#channel.bufferedAmount <= LOW_WATER || this.#closed) done() }, DRAIN_POLL_MS)
      this.#channel.addEventListener('bufferedamountlow', done)
      this.#channel.addEventListener('close', done)
    })
  }

  /** @param {string | Uint8Array<ArrayBuffer>} data */
  #send (data) {
    try {
      // send()'s overloads do not take the union
      this.#channel.send(/** @type {string} */ (data))
    } catch (err) {
      this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CHANNEL_CLOSED, String(err)))
    }
  }

  /**
   * The stall clock, started again by every request and message
   * (`lastActive`): our pending requests fail once `stallMs` pass without a
   * message. One timer, which looks at the clock when it fires and waits out
   * the rest: re-armed on every message, it cost a clearTimeout and a
   * setTimeout per 16-KiB frame, 75 ms of a page's main thread over the
   * shop's 40 images in a Chromium profile.
   */
  #armStall () {
    if (this.#timer === undefined && this.#pending.length && !this.#closed) this.#stallCheck(this.#options.stallMs ?? STALL_MS)
  }

  /** @param {number} ms when to look at the stall clock */
  #stallCheck (ms) {
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      if (this.#closed || !this.#pending.length) return
      const left = (this.#options.stallMs ?? STALL_MS) - (Date.now() - this.lastActive)
      if (left > 0) this.#stallCheck(left)
      else this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_STALL))
    }, ms)
  }

  /** @param {string} why */
  #fail (why) {
    this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_PEER_PROTOCOL, why))
  }

  /**
   * Close for good: pending requests reject with `err`, queued ones are dropped.
   * @param {Error} err
   */
  close (err) {
    if (this.#closed) return
    this.#closed = err
    clearTimeout(this.#timer)
    for (const p of this.#pending.splice(0)) p.reject(err)
    this.#queue.length = 0
    try { this.#channel.close() } catch {}
    this.#options.onClose?.(err)
  }
}
