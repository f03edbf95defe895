#!/usr/bin/env node
/* global RTCPeerConnection -- used inside page callbacks, which run in the browser */
/**
 * The floor under the peers' path in bench/page-load.js: how fast the
 * browsers here move bytes over WebRTC data channels at all, without the
 * client. Two pages (in two browser contexts, or two browsers for a mixed
 * pair) open `--channels` peer connections to each other, one data channel
 * each, over loopback ICE (the coordinator's STUN server, as in the tests);
 * then the first sends `--mb` MB split across its channels in the client's
 * own frames and with its own backpressure (client/src/transfer.js:
 * CHUNK_BYTES, HIGH_WATER, LOW_WATER; `--high-water KiB` tries another,
 * refilled at the same ratio; `--chunk KiB` another frame size), and the time runs until the other
 * page has every byte. New connections every round; `--rounds` rounds per
 * pair, medians. Also per round: the UDP datagrams the machine dropped
 * because a receiving socket's buffer was full (`/proc/net/snmp`), loopback's
 * only loss.
 *
 * The default size is the demo shop's 40 images (3.5 MB) over 3 channels, as
 * a visitor with 3 holders takes them: a page-load figure slower than that
 * time allows cannot be asked of the client.
 *
 * Loopback only; run it inside a network namespace of its own, as root
 * (Firefox needs a default route there):
 *
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh \
 *     node bench/channel-throughput.js [--pairs chromium,firefox,chromium:firefox,firefox:chromium]
 *       [--channels 3] [--mb 3.5] [--rounds 5] [--high-water KiB] [--chunk KiB] [--json]
 */
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { launchBrowser } from '../test/support/browsers.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { CHUNK_BYTES, HIGH_WATER, LOW_WATER } from '../client/src/transfer.js'
import { udpCounters } from './coordinator-load/procfs.js'
import { machineSpeedSpan } from './machine-speed.js'
import { median } from './stats.js'

const KINDS = /** @type {const} */ (['chromium', 'firefox'])
const OPEN_TIMEOUT_MS = 15_000

const { values: flags } = parseArgs({
  options: {
    pairs: { type: 'string', default: 'chromium,firefox,chromium:firefox,firefox:chromium' },
    channels: { type: 'string', default: '3' },
    mb: { type: 'string', default: '3.5' },
    rounds: { type: 'string', default: '5' },
    'high-water': { type: 'string', default: String(HIGH_WATER / 1024) },
    chunk: { type: 'string', default: String(CHUNK_BYTES / 1024) },
    json: { type: 'boolean', default: false }
  }
})

/** @param {string} message */
function usage (message) {
  console.error(`channel-throughput: ${message}`)
  process.exit(2)
}

/** @type {['chromium' | 'firefox', 'chromium' | 'firefox'][]} sender, receiver */
const pairs = String(flags.pairs).split(',').map((p) => {
  const [a, b = a] = p.split(':')
  if (!KINDS.includes(/** @type {any} */ (a)) || !KINDS.includes(/** @type {any} */ (b))) usage(`--pairs: ${p} is not KIND or KIND:KIND (chromium, firefox)`)
  const kind = (/** @type {string} */ k) => /** @type {'chromium' | 'firefox'} */ (k)
  return [kind(a), kind(b)]
})
const channels = Number(flags.channels)
const bytes = Math.round(Number(flags.mb) * 1e6)
const rounds = Number(flags.rounds)
if (!Number.isInteger(channels) || channels < 1 || channels > 16) usage('--channels: an integer from 1 to 16')
const chunk = Number(flags.chunk) * 1024
// 256 KiB: the largest message Chromium (and @roamhq/wrtc) take
if (!Number.isInteger(chunk) || chunk < 1024 || chunk > 256 << 10) usage('--chunk: KiB, from 1 to 256')
if (!Number.isFinite(bytes) || bytes < chunk || bytes > 1e9) usage('--mb: from the frame size to 1000')
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) usage('--rounds: an integer from 1 to 100')
const high = Number(flags['high-water']) * 1024
if (!Number.isInteger(high) || high < chunk || high > 64 << 20) usage('--high-water: KiB, from the frame size to 65536')
/** refilled at the client's ratio of low to high water */
const low = Math.round(high * LOW_WATER / HIGH_WATER)

/**
 * In the page: `n` peer connections with a data channel each (the offering side) or waiting for
 * one (the answering side), on `globalThis.bench`.
 * @param {{ ice: RTCConfiguration, n: number, offering: boolean }} o
 */
function makeConnections ({ ice, n, offering }) {
  const g = /** @type {any} */ (globalThis)
  g.bench = Array.from({ length: n }, () => {
    const pc = new RTCPeerConnection(ice)
    const end = { pc, channel: /** @type {RTCDataChannel | null} */ (null), got: 0, want: 0, done: 0, opened: /** @type {Promise<void>} */ (Promise.resolve()) }
    const take = (/** @type {RTCDataChannel} */ ch) => {
      ch.binaryType = 'arraybuffer'
      end.channel = ch
      ch.onmessage = (e) => {
        end.got += e.data.byteLength
        if (end.got >= end.want && !end.done) end.done = performance.now()
      }
      end.opened = ch.readyState === 'open' ? Promise.resolve() : new Promise((resolve) => { ch.onopen = () => resolve() })
    }
    if (offering) take(pc.createDataChannel('bench'))
    else end.opened = new Promise((resolve) => { pc.ondatachannel = (e) => { take(e.channel); end.opened.then(resolve) } })
    return end
  })
}

/**
 * In the page: connection i's description, once its candidates are gathered (no trickle: the
 * bench times the transfer, not the set-up). With `remote`, the offer to answer.
 * @param {{ i: number, remote?: RTCSessionDescriptionInit }} o
 */
async function describe ({ i, remote }) {
  const { pc } = /** @type {any} */ (globalThis).bench[i]
  if (remote) await pc.setRemoteDescription(remote)
  await pc.setLocalDescription(remote ? await pc.createAnswer() : await pc.createOffer())
  if (pc.iceGatheringState !== 'complete') {
    await new Promise((resolve) => {
      pc.addEventListener('icegatheringstatechange', () => { if (pc.iceGatheringState === 'complete') resolve(undefined) })
      setTimeout(resolve, 2000)
    })
  }
  return { type: pc.localDescription.type, sdp: pc.localDescription.sdp }
}

/**
 * In the sending page: `per` bytes on each channel at once, in the client's frames, with its
 * backpressure.
 * @param {{ per: number, chunk: number, high: number, low: number }} o
 */
async function sendAll ({ per, chunk, high, low }) {
  const frame = new Uint8Array(chunk)
  await Promise.all(/** @type {any} */ (globalThis).bench.map(async (/** @type {any} */ end) => {
    const ch = end.channel
    ch.bufferedAmountLowThreshold = low
    for (let at = 0; at < per; at += chunk) {
      if (ch.bufferedAmount > high) await new Promise((resolve) => { ch.onbufferedamountlow = resolve })
      ch.send(frame.subarray(0, Math.min(chunk, per - at)))
    }
  }))
}

/**
 * In the receiving page: its connections' selected candidate pairs, as `protocol local/remote type`.
 * @returns {Promise<string>}
 */
async function selectedPath () {
  const paths = await Promise.all(/** @type {any} */ (globalThis).bench.map(async (/** @type {any} */ e) => {
    /** @type {Map<string, any>} */
    const stats = new Map()
    ;(await e.pc.getStats()).forEach((/** @type {any} */ r) => stats.set(r.id, r))
    const pair = [...stats.values()].find((r) => r.type === 'candidate-pair' && (r.selected || r.nominated) && r.state === 'succeeded')
    const local = stats.get(pair?.localCandidateId)
    const remote = stats.get(pair?.remoteCandidateId)
    return pair ? `${local?.protocol} ${local?.candidateType}/${remote?.candidateType}` : 'none'
  }))
  return [...new Set(paths)].join(', ')
}

const coordinator = await startCoordinator({ port: 0, stunPort: 0, logLevel: 'silent' })
const site = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>channel throughput</title>'))
await new Promise((resolve) => site.listen(0, '127.0.0.1', () => resolve(undefined)))
const address = /** @type {import('node:net').AddressInfo} */ (site.address())
const pageUrl = `http://127.0.0.1:${address.port}/`
const ice = { iceServers: [{ urls: coordinator.stunUrl }] }
const speedEnd = machineSpeedSpan((line) => console.error(`channel-throughput: ${line}`))
/** @type {Record<string, { mbPerS: number, minMbPerS: number, maxMbPerS: number, ms: number, dropped: number, datagrams: number }>} */
const out = {}
/** @type {Map<string, import('playwright-core').Browser>} */
const browsers = new Map()
/** @param {'chromium' | 'firefox'} kind */
const browser = async (kind) => {
  const launched = browsers.get(kind) ?? await launchBrowser(kind)
  browsers.set(kind, launched)
  return launched
}

try {
  for (const [from, to] of pairs) {
    const name = from === to ? from : `${from} → ${to}`
    /** @type {{ ms: number, dropped: number, datagrams: number, path: string }[]} */
    const runs = []
    for (let round = 0; round < rounds; round++) {
      const sender = await (await (await browser(from)).newContext()).newPage()
      const receiver = await (await (await browser(to)).newContext()).newPage()
      try {
        await sender.goto(pageUrl)
        await receiver.goto(pageUrl)
        await sender.evaluate(makeConnections, { ice, n: channels, offering: true })
        await receiver.evaluate(makeConnections, { ice, n: channels, offering: false })
        for (let i = 0; i < channels; i++) {
          const offer = await sender.evaluate(describe, { i })
          const answer = await receiver.evaluate(describe, { i, remote: offer })
          await sender.evaluate(({ i, answer }) => /** @type {any} */ (globalThis).bench[i].pc.setRemoteDescription(answer), { i, answer })
        }
        const opened = (/** @type {import('playwright-core').Page} */ page) => page.evaluate((ms) => Promise.race([
          Promise.all(/** @type {any} */ (globalThis).bench.map((/** @type {any} */ e) => e.opened)).then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), ms))
        ]), OPEN_TIMEOUT_MS)
        if (!(await opened(sender)) || !(await opened(receiver))) throw new Error(`${name}: the data channels did not open within ${OPEN_TIMEOUT_MS} ms (run in a loopback network namespace: see the header)`)
        const per = Math.ceil(bytes / channels)
        await receiver.evaluate((per) => { for (const e of /** @type {any} */ (globalThis).bench) e.want = per }, per)
        const udpBefore = udpCounters()
        const started = await receiver.evaluate(() => performance.now())
        await sender.evaluate(sendAll, { per, chunk, high, low })
        const done = await receiver.evaluate((ms) => new Promise((resolve) => {
          const bench = /** @type {any} */ (globalThis).bench
          const check = setInterval(() => {
            if (bench.every((/** @type {any} */ e) => e.done)) resolve(Math.max(...bench.map((/** @type {any} */ e) => e.done)))
          }, 2)
          setTimeout(() => { clearInterval(check); resolve(0) }, ms)
        }), 60_000)
        if (!done) throw new Error(`${name}: not every byte came within 60 s`)
        const udpAfter = udpCounters()
        const path = await receiver.evaluate(selectedPath)
        runs.push({
          ms: /** @type {number} */ (done) - started,
          dropped: udpAfter && udpBefore ? udpAfter.dropped - udpBefore.dropped : 0,
          datagrams: udpAfter && udpBefore ? udpAfter.datagrams - udpBefore.datagrams : 0,
          path
        })
        console.error(`channel-throughput: ${name}, round ${round + 1}: ${Math.round(runs.at(-1)?.ms ?? 0)} ms, ${runs.at(-1)?.dropped} datagrams dropped, ${runs.at(-1)?.path}`)
      } finally {
        await sender.context().close()
        await receiver.context().close()
      }
    }
    const rates = runs.map((r) => bytes / 1e6 / (r.ms / 1000))
    out[name] = {
      mbPerS: median(rates),
      minMbPerS: Math.min(...rates),
      maxMbPerS: Math.max(...rates),
      ms: median(runs.map((r) => r.ms)),
      dropped: median(runs.map((r) => r.dropped)),
      datagrams: median(runs.map((r) => r.datagrams))
    }
  }
} finally {
  for (const b of browsers.values()) await b.close()
  site.close()
  await coordinator.close()
}

const machine = speedEnd()
if (flags.json) {
  console.log(JSON.stringify({ channels, bytes, rounds, chunk, highWater: high, lowWater: low, machine, pairs: out }))
} else {
  console.log(`\n${(bytes / 1e6).toFixed(2)} MB over ${channels} data channel(s) at once, ${chunk / 1024} KiB frames, at most ${high / 1024} KiB buffered (refilled at ${low / 1024}), ${rounds} rounds; medians (min–max)`)
  console.log('pair                  MB/s               ms      UDP datagrams dropped / received')
  for (const [name, r] of Object.entries(out)) {
    console.log(`${name.padEnd(22)}${`${r.mbPerS.toFixed(1)} (${r.minMbPerS.toFixed(1)}–${r.maxMbPerS.toFixed(1)})`.padEnd(19)}${String(Math.round(r.ms)).padEnd(8)}${r.dropped} / ${r.datagrams}`)
  }
}
process.exit(0)
