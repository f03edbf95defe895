/**
 * A far holder's replies follow each other without a gap (peer-fetch.js,
 * peer-slots.js): the page asks for the next reply what the channel carries
 * in a round trip before the last one ends, not a fixed 64 KB. Real
 * Transfers on both ends of a channel pair over a line of 10 MB/s and 10 ms
 * each way (fake-channel.js `link`: 200 KB in a round trip), the holder
 * serving from memory.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { Transfer } from '../src/transfer.js'
import { WINDOW_BYTES } from '../src/peer-slots.js'
import { channelPair } from './fake-channel.js'
import { oneHolder } from './one-holder.js'

const LATENCY_MS = 10
const BYTES_PER_MS = 10_000
const SIZE = 100_000

test('a far holder is asked for the next reply a round trip before the last one ends', { timeout: 20000 }, async () => {
  const assets = Array.from({ length: 12 }, () => randomBytes(SIZE))
  const byHash = new Map(assets.map((bytes) => [`sha256-${createHash('sha256').update(bytes).digest('base64')}`, bytes]))
  const [near, far] = channelPair()
  near.link = far.link = { latencyMs: LATENCY_MS, bytesPerMs: BYTES_PER_MS }
  /** For each `get` the page sent, the bytes of its earlier requests' replies it had yet to receive */
  const owedAtGet = /** @type {number[]} */ ([])
  let received = 0
  near.addEventListener('message', (e) => {
    const data = /** @type {MessageEvent} */ (e).data
    if (data instanceof ArrayBuffer) received += data.byteLength
  })
  near.tap = (data) => {
    if (typeof data === 'string' && JSON.parse(data).t === 'get') owedAtGet.push(owedAtGet.length * SIZE - received)
    return data
  }
  // The holder: a real Transfer serving from memory.
  const holder = new Transfer(/** @type {any} */ (far), {
    serve: async (hash) => {
      const bytes = byHash.get(hash)
      return bytes ? { bytes: new Uint8Array(bytes), type: 'image/png' } : null
    }
  })
  const page = new Transfer(/** @type {any} */ (near), { serve: async () => null })
  const peers = oneHolder(page, async (m) => ({ type: 'holders', found: Object.fromEntries(m.hashes.map((h) => [h, ['holder']])) }))
  const how = () => ({ signal: new AbortController().signal, onBytes () {}, deadline: () => 60000, priority: () => /** @type {const} */ ('viewport'), originMs: () => null, race () {} })
  assert.ok(holder.open)
  const got = await Promise.all([...byHash.keys()].map((hash) => peers.get('/a.png', { hash, size: SIZE }, how())))
  assert.ok(got.every((a) => a?.peer === 'holder'))
  // From the fourth on (the first reply is the page's measure of the line: its round trip, 20 ms and
  // a little, and its rate), each next reply is asked for with a round trip's bytes still to come,
  // about 200 KB; a window of 64 KB would ask with less than 64 KB to come, some 15 ms too late.
  const short = owedAtGet.slice(3).filter((owed) => owed < 2 * WINDOW_BYTES)
  assert.deepEqual(short, [], `asked with too little to come (${owedAtGet.map((b) => Math.round(b / 1000)).join(', ')} KB)`)
})
