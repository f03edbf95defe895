/**
 * One WebRTC connection to one peer, from offer to open `maygh` data channel,
 * with native RTCPeerConnection. The offering side picks the `cid` and creates
 * the channel; ICE candidates trickle both ways through the coordinator, and
 * remote ones that arrive before the remote description are queued.
 */
import { CLIENT_ERRORS, MayghError } from '../../protocol/index.js'

/**
 * What two peers exchange through the coordinator's `connect` (docs/protocol.md):
 * an offer or answer, or one trickled ICE candidate, for connection `cid`.
 * @typedef {{ cid: string, sdp?: RTCSessionDescriptionInit, candidate?: RTCIceCandidateInit }} Signal
 */

export class PeerLink {
  /** @type {ConstructorParameters<typeof PeerLink>[0]} */
  #options
  /** @type {string} */
  #cid
  /** @type {RTCIceCandidateInit[] | null} remote candidates held until the remote description is set */
  #queued = []
  #closed = false
  /** whether the channel has opened */
  up = false
  /** @type {unknown[]} messages that arrived before a Transfer took the channel */
  held = []
  /** @type {RTCPeerConnection} */
  #pc
  /** @type {(channel: RTCDataChannel) => void} */
  #resolveOpen
  /** @type {(err: Error) => void} */
  #rejectOpen
  /** @type {ReturnType<typeof setTimeout>} */
  #timer
  /** @type {Promise<Signal> | null} the offer, once made (the offering side) */
  offered = null

  /**
   * @param {object} options
   * @param {string} options.peer remote peer id ('' until known: an offer a lookup carries, PeerPool.prepare)
   * @param {string} options.cid connection id (chosen by the offerer)
   * @param {boolean} options.initiator whether we make the offer
   * @param {RTCConfiguration} options.ice ICE servers and policy (the coordinator's welcome)
   * @param {typeof RTCPeerConnection} [options.RTCPeerConnection] the page's, by default
   * @param {(signal: Signal) => void} options.signal sends a signal to the peer
   * @param {number} options.timeoutMs the channel must open within this
   * @param {(err: Error) => void} [options.onClose]
   */
  constructor (options) {
    this.#options = options
    this.peer = options.peer
    this.#cid = options.cid
    const pc = this.#pc = new (options.RTCPeerConnection ?? RTCPeerConnection)({ ...options.ice })
    /** @type {Promise<RTCDataChannel>} */
    this.opened = new Promise((resolve, reject) => {
      this.#resolveOpen = resolve
      this.#rejectOpen = reject
    })
    this.opened.catch(() => {})
    this.#timer = setTimeout(() => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_TIMEOUT)), options.timeoutMs)
    pc.onicecandidate = (e) => {
      if (e.candidate?.candidate) options.signal({ cid: this.#cid, candidate: e.candidate.toJSON() })
    }
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, pc.connectionState))
    }
    if (options.initiator) {
      this.#setup(pc.createDataChannel('maygh', { ordered: true }))
      this.offered = this.#describe(pc.createOffer())
      this.offered.catch((err) => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, String(err))))
    } else {
      pc.ondatachannel = (e) => { if (e.channel.label === 'maygh') this.#setup(e.channel) }
    }
  }

  /**
   * Set our description and send it. It is sent as created, not read back
   * from `localDescription` (node-webrtc can crash reading that while ICE
   * gathers); candidates trickle anyway.
   * @param {Promise<RTCSessionDescriptionInit>} created
   * @returns {Promise<Signal>} what was sent
   */
  async #describe (created) {
    const { type, sdp } = await created
    await this.#pc.setLocalDescription({ type, sdp })
    const signal = { cid: this.#cid, sdp: { type, sdp } }
    this.#options.signal(signal)
    return signal
  }

  /** @param {RTCDataChannel} channel */
  #setup (channel) {
    channel.binaryType = 'arraybuffer'
    // Held until a Transfer takes the channel (PeerPool.attach): some WebRTC
    // stacks (node-webrtc) deliver the first messages with, or before, `open`.
    channel.onmessage = (e) => this.held.push(e.data)
    const opened = () => {
      this.up = true
      clearTimeout(this.#timer)
      this.#resolveOpen(channel)
    }
    channel.onopen = opened
    channel.addEventListener('close', () => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CHANNEL_CLOSED)))
    if (channel.readyState === 'open') opened()
  }

  /**
   * A signal from the peer for this connection.
   * @param {Omit<Signal, 'cid'>} signal
   */
  async handle (signal) {
    if (this.#closed) return
    try {
      if (signal.sdp) {
        await this.#pc.setRemoteDescription(signal.sdp)
        if (signal.sdp.type === 'offer') await this.#describe(this.#pc.createAnswer())
        const queued = this.#queued ?? []
        this.#queued = null
        for (const c of queued) await this.#pc.addIceCandidate(c).catch(() => {})
      } else if (signal.candidate) {
        if (this.#queued) this.#queued.push(signal.candidate)
        else await this.#pc.addIceCandidate(signal.candidate).catch(() => {})
      }
    } catch (err) {
      this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, String(err)))
    }
  }

  /** @param {Error} err */
  close (err) {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#timer)
    this.#rejectOpen(err)
    try { this.#pc.close() } catch {}
    this.#options.onClose?.(err)
  }
}
