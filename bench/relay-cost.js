#!/usr/bin/env node
/**
 * What privacy mode costs: two peers that reach each other only through a
 * TURN relay (`iceTransportPolicy: 'relay'`, coturn on loopback with the TURN
 * REST API credentials the coordinator mints) against the same two peers
 * connected directly (host candidates, no ICE server). Both peers are
 * `@roamhq/wrtc` connections in this process, signalled by handing offer,
 * answer and trickled candidates straight across. Each round runs both modes,
 * in alternating order, and measures for each
 *   1. the time from creating the two connections until the data channel is
 *      open at both ends;
 *   2. the time to send --mb MiB over an ordered channel in 16 KiB messages
 *      with backpressure (bufferedAmount kept under 1 MiB, sending resumed
 *      once it is down to 256 KiB), until the receiver has every byte, in
 *      order;
 * and, in relay mode, checks that every candidate either side gathered is a
 * relay one and that both sides' selected pair is relay to relay (else it
 * throws). What the relay carries: each payload byte twice (into the relay
 * and out of it), and the CPU time coturn spent over the relay rounds, from
 * /proc. Prints medians, min and max per mode and the ratios relay/direct.
 *
 * Loopback only; run it inside a network namespace of its own, as root:
 *
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh \
 *     node bench/relay-cost.js [--rounds N] [--mb M] [--json]
 */
import { parseArgs } from 'node:util'
import wrtc from '@roamhq/wrtc'
import { turnServer } from '../coordinator/src/ice.js'
import { startTurnServer } from '../test/support/turn-server.js'
import { childPids, clockTicksPerSecond, cpuTicks } from './coordinator-load/procfs.js'
import { median } from './stats.js'

/** Each message's size; its first 4 bytes hold its index, which the receiver checks. */
const MESSAGE_BYTES = 16 * 1024
/** Sending pauses once this much is buffered … */
const HIGH_WATER = 1024 * 1024
/** … and goes on when it has drained to this. */
const LOW_WATER = 256 * 1024
const OPEN_TIMEOUT_MS = 15_000
/** How long the TURN credentials are valid: longer than any run. */
const CREDENTIAL_SECONDS = 24 * 3600

/** @typedef {'direct' | 'relay'} Mode */
/**
 * @typedef {object} Trial one mode in one round
 * @property {number} openMs from creating the two connections until the channel is open at both ends
 * @property {number} transferMs from the first message sent until the receiver has the last one
 * @property {string[]} selected each side's selected pair, as `local type/remote type`
 * @property {string[]} gathered every candidate either side gathered
 * @property {number} wireBytes bytes both peers' ICE transports sent and received (DTLS records and ICE checks)
 * @property {number | null} turnCpuTicks coturn's user + system CPU time over the trial (relay mode), in clock ticks
 */
/**
 * @typedef {object} RelayCostResult
 * @property {number} rounds
 * @property {number} bytes payload of each transfer
 * @property {Trial[]} direct
 * @property {Trial[]} relay
 * @property {number} ticksPerSecond the unit of `turnCpuTicks`
 */

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {() => string} what says what did not happen in time
 * @returns {Promise<T>}
 */
async function within (promise, ms, what) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  const late = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(what())), ms) })
  try {
    return /** @type {T} */ (await Promise.race([promise, late]))
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Two connections, signalled in-process with trickle ICE, and their channel
 * once open at both ends. Candidates wait until the other side has the
 * description they belong with.
 * @param {[RTCConfiguration, RTCConfiguration]} configs
 * @param {RTCPeerConnection[]} made every connection created is pushed here, for the caller to close
 * @returns {Promise<{ pcs: RTCPeerConnection[], send: RTCDataChannel, recv: RTCDataChannel, openMs: number, gathered: string[] }>}
 */
async function connect (configs, made) {
  const start = performance.now()
  const pcs = configs.map((config) => new wrtc.RTCPeerConnection(config))
  made.push(...pcs)
  /** @type {string[]} */
  const gathered = []
  /** @type {(err: Error) => void} */
  let fail = () => {}
  const failed = new Promise((resolve, reject) => { fail = reject })
  const ready = [false, false]
  /** @type {RTCIceCandidate[][]} candidates for each side, held until it has its remote description */
  const held = [[], []]
  const add = (/** @type {number} */ to, /** @type {RTCIceCandidate} */ c) => pcs[to].addIceCandidate(c).catch(fail)
  pcs.forEach((pc, i) => {
    const other = 1 - i
    pc.onicecandidate = (e) => {
      if (!e.candidate?.candidate) return
      gathered.push(e.candidate.candidate)
      if (ready[other]) add(other, e.candidate)
      else held[other].push(e.candidate)
    }
    pc.oniceconnectionstatechange = () => {
      if (pc.iceConnectionState === 'failed') fail(new Error(`ICE failed; candidates: ${gathered.join(' | ') || 'none'}`))
    }
  })
  const described = async (/** @type {number} */ i, /** @type {RTCSessionDescriptionInit} */ d) => {
    await pcs[i].setRemoteDescription(d)
    ready[i] = true
    for (const c of held[i].splice(0)) add(i, c)
  }
  const send = pcs[0].createDataChannel('bench', { ordered: true })
  const opened = Promise.all([
    new Promise((resolve) => { send.onopen = resolve }),
    /** @type {Promise<RTCDataChannel>} */ (new Promise((resolve) => {
      pcs[1].ondatachannel = (e) => {
        if (e.channel.readyState === 'open') resolve(e.channel)
        else e.channel.onopen = () => resolve(e.channel)
      }
    }))
  ])
  const signalled = (async () => {
    // (the description each side created is what it hands across: reading `localDescription` can crash wrtc)
    const offer = await pcs[0].createOffer()
    await pcs[0].setLocalDescription(offer)
    await described(1, offer)
    const answer = await pcs[1].createAnswer()
    await pcs[1].setLocalDescription(answer)
    await described(0, answer)
  })()
  signalled.catch(fail)
  const [, recv] = await within(Promise.race([opened, failed]), OPEN_TIMEOUT_MS,
    () => `the channel did not open within ${OPEN_TIMEOUT_MS} ms; candidates: ${gathered.join(' | ') || 'none'}`)
  return { pcs, send, recv, openMs: performance.now() - start, gathered }
}

/**
 * Resolves once the channel's buffer has drained to LOW_WATER: on
 * `bufferedamountlow`, or found by polling every millisecond, as wrtc never
 * fires that event (node-webrtc/node-webrtc#305: `bufferedAmountLowThreshold`
 * is a plain property there; the buffer drains to 0 and nothing is told).
 * @param {RTCDataChannel} channel
 * @returns {Promise<void>}
 */
function drained (channel) {
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(poll)
      channel.removeEventListener('bufferedamountlow', done)
      resolve()
    }
    const poll = setInterval(() => { if (channel.bufferedAmount <= LOW_WATER) done() }, 1)
    channel.addEventListener('bufferedamountlow', done)
  })
}

/**
 * @param {RTCDataChannel} send
 * @param {RTCDataChannel} recv
 * @param {number} bytes a multiple of MESSAGE_BYTES
 * @returns {Promise<number>} ms from the first message sent until the receiver has the last
 */
async function transfer (send, recv, bytes) {
  const count = bytes / MESSAGE_BYTES
  const message = new Uint8Array(MESSAGE_BYTES)
  const index = new DataView(message.buffer)
  let next = 0
  recv.binaryType = 'arraybuffer'
  const received = new Promise((resolve, reject) => {
    recv.onmessage = (e) => {
      const data = /** @type {ArrayBuffer} */ (e.data)
      const at = data.byteLength === MESSAGE_BYTES ? new DataView(data).getUint32(0) : -1
      if (at !== next) reject(new Error(`message ${next} was due, got ${data.byteLength} bytes numbered ${at}`))
      if (++next === count) resolve(undefined)
    }
  })
  send.bufferedAmountLowThreshold = LOW_WATER
  const start = performance.now()
  const sent = (async () => {
    for (let i = 0; i < count; i++) {
      if (send.bufferedAmount + MESSAGE_BYTES > HIGH_WATER) await drained(send)
      index.setUint32(0, i)
      send.send(message)
    }
  })()
  // Allows for 0.25 MiB/s, far below what loopback gives.
  const limitMs = 10_000 + bytes / 256
  await within(Promise.all([sent, received]), limitMs, () => `the transfer did not finish within ${limitMs} ms (${next} of ${count} messages in)`)
  return performance.now() - start
}

/**
 * @param {RTCPeerConnection} pc
 * @returns {Promise<{ selected: string, wireBytes: number }>} the selected pair's candidate types, and bytes the transport sent and received
 */
async function transportFacts (pc) {
  /** @type {Map<string, any>} */
  const stats = new Map()
  for (const s of (await pc.getStats()).values()) stats.set(s.id, s)
  const transport = [...stats.values()].find((s) => s.type === 'transport')
  const pair = stats.get(transport?.selectedCandidatePairId) ??
    [...stats.values()].find((s) => s.type === 'candidate-pair' && (s.selected || (s.nominated && s.state === 'succeeded')))
  const type = (/** @type {string | undefined} */ id) => stats.get(id ?? '')?.candidateType ?? 'none'
  return {
    selected: `${type(pair?.localCandidateId)}/${type(pair?.remoteCandidateId)}`,
    wireBytes: (transport?.bytesSent ?? 0) + (transport?.bytesReceived ?? 0)
  }
}

/**
 * @param {Mode} mode
 * @param {{ url: string, secret: string }} turn
 * @param {number} bytes
 * @param {number | null} turnPid
 * @returns {Promise<Trial>}
 */
async function trial (mode, turn, bytes, turnPid) {
  const expiry = Math.floor(Date.now() / 1000) + CREDENTIAL_SECONDS
  /** @type {(name: string) => RTCConfiguration} */
  const config = mode === 'relay'
    ? (name) => ({ iceServers: [turnServer([turn.url], turn.secret, name, expiry)], iceTransportPolicy: 'relay' })
    : () => ({ iceServers: [], iceTransportPolicy: 'all' })
  /** @type {RTCPeerConnection[]} */
  const made = []
  const cpuBefore = turnPid === null ? 0 : cpuTicks(turnPid)
  try {
    const { pcs, send, recv, openMs, gathered } = await connect([config('bench-a'), config('bench-b')], made)
    const transferMs = await transfer(send, recv, bytes)
    const turnCpuTicks = turnPid === null ? null : cpuTicks(turnPid) - cpuBefore
    const facts = await Promise.all(pcs.map(transportFacts))
    const selected = facts.map((f) => f.selected)
    if (mode === 'relay') {
      const other = gathered.filter((c) => !/\styp relay(\s|$)/.test(c))
      if (gathered.length === 0 || other.length > 0) throw new Error(`relay mode gathered non-relay candidates: ${other.join(' | ') || 'none at all'}`)
      if (selected.some((s) => s !== 'relay/relay')) throw new Error(`relay mode selected pairs ${selected.join(', ')}`)
    }
    return { openMs, transferMs, selected, gathered, wireBytes: facts.reduce((n, f) => n + f.wireBytes, 0), turnCpuTicks }
  } finally {
    for (const pc of made) pc.close()
  }
}

/**
 * @param {{ rounds: number, mb: number, log?: (line: string) => void }} options `mb`: MiB sent per transfer; `log`: progress
 * @returns {Promise<RelayCostResult>}
 */
export async function runRelayCost ({ rounds, mb, log = () => {} }) {
  const bytes = mb * 1024 * 1024
  const turn = await startTurnServer()
  try {
    // The harness keeps coturn's pid to itself; it is this process's only turnserver child.
    const pids = childPids(process.pid, 'turnserver')
    const turnPid = pids.length === 1 ? pids[0] : null
    /** @type {Record<Mode, Trial[]>} */
    const trials = { direct: [], relay: [] }
    for (let round = 0; round < rounds; round++) {
      /** @type {Mode[]} */
      const order = round % 2 === 0 ? ['direct', 'relay'] : ['relay', 'direct']
      for (const mode of order) {
        try {
          const t = await trial(mode, turn, bytes, mode === 'relay' ? turnPid : null)
          trials[mode].push(t)
          log(`round ${round + 1} ${mode}: open ${t.openMs.toFixed(1)} ms, ${(mb / t.transferMs * 1000).toFixed(2)} MiB/s, ${t.selected.join(' ')}`)
        } catch (err) {
          if (mode === 'relay') /** @type {Error} */ (err).message += `\nturnserver log (tail):\n${turn.log().slice(-2000)}`
          throw err
        }
      }
    }
    return { rounds, bytes, ...trials, ticksPerSecond: clockTicksPerSecond() }
  } finally {
    await turn.close()
  }
}

/** @param {number[]} xs @param {number} digits */
const spread = (xs, digits) => {
  const round = (/** @type {number} */ x) => Number(x.toFixed(digits))
  return { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) }
}

/**
 * @param {RelayCostResult} r
 * @param {number} mb
 */
function figures (r, mb) {
  /** @param {Trial[]} ts */
  const mode = (ts) => ({
    openMs: spread(ts.map((t) => t.openMs), 1),
    MiBps: spread(ts.map((t) => mb / t.transferMs * 1000), 2),
    selected: [...new Set(ts.flatMap((t) => t.selected))].join(' '),
    candidates: [...new Set(ts.flatMap((t) => t.gathered.map((c) => c.replace(/^candidate:\S+ \d \S+ \d+ \S+ \d+ /, '').replace(/ generation.*/, ''))))],
    // what both peers' transports sent and received: in relay mode, the traffic into and out of the relay as measured
    wireBytesPerRound: Math.round(ts.reduce((n, t) => n + t.wireBytes, 0) / ts.length)
  })
  const direct = mode(r.direct)
  const relay = mode(r.relay)
  const ticks = r.relay.map((t) => t.turnCpuTicks)
  const cpuMs = ticks.every((t) => t !== null) ? ticks.reduce((n, t) => n + /** @type {number} */ (t), 0) * 1000 / r.ticksPerSecond : null
  return {
    rounds: r.rounds,
    payloadMiB: mb,
    messageBytes: MESSAGE_BYTES,
    direct,
    relay,
    relayOverDirect: {
      openMs: Number((relay.openMs.median / direct.openMs.median).toFixed(2)),
      MiBps: Number((relay.MiBps.median / direct.MiBps.median).toFixed(2))
    },
    turn: {
      // each payload byte goes into the relay and out of it again
      relayTrafficBytesPerRound: r.bytes * 2,
      relayTrafficBytes: r.bytes * 2 * r.relay.length,
      // null: coturn's pid was not found
      cpuMs,
      cpuMsPerMiBRelayed: cpuMs === null ? null : Number((cpuMs / (mb * r.relay.length)).toFixed(2))
    }
  }
}

const USAGE = `usage: node bench/relay-cost.js [--rounds N] [--mb M] [--json]
  --rounds N  rounds, each running both modes (1 to 100, default 5)
  --mb M      MiB sent per transfer (1 to 1024, default 16)
  --json      print one JSON line instead of an object
Run it in a loopback-only network namespace, as root:
  unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/relay-cost.js`

/** @param {string} message */
function usageError (message) {
  console.error(`relay-cost: ${message}\n${USAGE}`)
  process.exit(2)
}

/**
 * @param {string | undefined} value
 * @param {string} name
 * @param {number} fallback
 * @param {number} max
 */
function integer (value, name, fallback, max) {
  const n = value === undefined ? fallback : Number(value)
  if (!/^\d+$/.test(value ?? String(fallback)) || n < 1 || n > max) usageError(`--${name} must be an integer from 1 to ${max}, got ${value}`)
  return n
}

async function main () {
  /** @type {{ rounds?: string, mb?: string, json?: boolean, help?: boolean }} */
  let values = {}
  try {
    values = parseArgs({ options: { rounds: { type: 'string' }, mb: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } } }).values
  } catch (err) {
    usageError(/** @type {Error} */ (err).message)
  }
  if (values.help) {
    console.log(USAGE)
    return
  }
  const rounds = integer(values.rounds, 'rounds', 5, 100)
  const mb = integer(values.mb, 'mb', 16, 1024)
  try {
    const r = await runRelayCost({ rounds, mb, log: (line) => process.stderr.write(`relay-cost: ${line}\n`) })
    const f = figures(r, mb)
    console.log(values.json ? JSON.stringify(f) : f)
  } catch (err) {
    console.error(err)
    process.exit(1)
  }
  // wrtc's native teardown crashes (SIGSEGV) when the process ends by itself
  // after relayed connections; exiting here skips it.
  process.exit(0)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
