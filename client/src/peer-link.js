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
  /**
   * @param {object} options
   * @param {string} options.peer remote peer id
   * @param {string} options.cid connection id (chosen by the offerer)
   * @param {boolean} options.initiator whether we make the offer
   * @param {RTCIceServer[]} options.iceServers
   * @param {typeof RTCPeerConnection} [options.RTCPeerConnection] the page's, by default
   * @param {(signal: Signal) => void} options.signal sends a signal to the peer
   * @param {number} options.timeoutMs the channel must open within this
   * @param {(err: Error) => void} [options.onClose]
   */
  constructor (options) {
    this.options = options
    this.peer = options.peer
    this.cid = options.cid
    /** @type {RTCIceCandidateInit[] | null} remote candidates held until the remote description is set */
    this.queued = []
    this.closed = false
    /** whether the channel has opened */
    this.up = false
    const pc = this.pc = new (options.RTCPeerConnection ?? RTCPeerConnection)({ iceServers: options.iceServers })
    /** @type {Promise<RTCDataChannel>} */
    this.opened = new Promise((resolve, reject) => {
      this.resolveOpen = resolve
      this.rejectOpen = reject
    })
    this.opened.catch(() => {})
    this.timer = setTimeout(() => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_TIMEOUT)), options.timeoutMs)
    pc.onicecandidate = (e) => {
      if (e.candidate?.candidate) options.signal({ cid: this.cid, candidate: e.candidate.toJSON() })
    }
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, pc.connectionState))
    }
    if (options.initiator) {
      this.setup(pc.createDataChannel('maygh', { ordered: true }))
      this.offer().catch((err) => this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, String(err))))
    } else {
      pc.ondatachannel = (e) => { if (e.channel.label === 'maygh') this.setup(e.channel) }
    }
  }

  async offer () {
    await this.pc.setLocalDescription(await this.pc.createOffer())
    const { type, sdp } = /** @type {RTCSessionDescription} */ (this.pc.localDescription)
    this.options.signal({ cid: this.cid, sdp: { type, sdp } })
  }

  /** @param {RTCDataChannel} channel */
  setup (channel) {
    channel.binaryType = 'arraybuffer'
    const opened = () => {
      this.up = true
      clearTimeout(this.timer)
      this.resolveOpen(channel)
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
    if (this.closed) return
    try {
      if (signal.sdp) {
        await this.pc.setRemoteDescription(signal.sdp)
        if (signal.sdp.type === 'offer') {
          await this.pc.setLocalDescription(await this.pc.createAnswer())
          const { type, sdp } = /** @type {RTCSessionDescription} */ (this.pc.localDescription)
          this.options.signal({ cid: this.cid, sdp: { type, sdp } })
        }
        const queued = this.queued ?? []
        this.queued = null
        for (const c of queued) await this.pc.addIceCandidate(c).catch(() => {})
      } else if (signal.candidate) {
        if (this.queued) this.queued.push(signal.candidate)
        else await this.pc.addIceCandidate(signal.candidate).catch(() => {})
      }
    } catch (err) {
      this.close(new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_FAILED, String(err)))
    }
  }

  /** @param {Error} err */
  close (err) {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.timer)
    this.rejectOpen(err)
    try { this.pc.close() } catch {}
    this.options.onClose?.(err)
  }
}
