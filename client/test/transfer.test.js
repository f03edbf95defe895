import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Transfer, CHUNK_BYTES, HIGH_WATER } from '../src/transfer.js'
import { sriOf } from '../../protocol/index.js'
import { channelPair } from './fake-channel.js'

/**
 * A sender holding `assets` and a receiver, over a fake channel pair.
 * @param {Record<string, Uint8Array>} assets by hash
 * @param {object} [options]
 */
function pair (assets, options = {}) {
  const [ca, cb] = channelPair()
  const served = []
  const sender = new Transfer(/** @type {any} */ (ca), {
    serve: async (hash) => assets[hash] ? { bytes: assets[hash], type: 'image/png' } : null,
    onServed: (hash, bytes) => served.push({ hash, bytes }),
    ...options
  })
  const receiver = new Transfer(/** @type {any} */ (cb), { serve: async () => null, stallMs: 1000, ...options })
  return { ca, cb, sender, receiver, served }
}

test('a request gets the exact bytes in frames of at most 16 KiB', async () => {
  const bytes = new Uint8Array(randomBytes(100_000))
  const hash = await sriOf(bytes)
  const { ca, receiver, served } = pair({ [hash]: bytes })
  const got = await receiver.request(hash)
  assert.deepEqual(got.bytes, bytes)
  assert.equal(got.type, 'image/png')
  const frames = ca.sent.filter((m) => typeof m !== 'string')
  assert.equal(frames.length, Math.ceil(bytes.length / CHUNK_BYTES))
  assert.ok(frames.every((f) => f.byteLength <= CHUNK_BYTES))
  assert.deepEqual(JSON.parse(/** @type {string} */ (ca.sent[0])), { t: 'ok', id: 1, size: bytes.length, type: 'image/png' })
  assert.deepEqual(served, [{ hash, bytes: bytes.length }])
})

test('pipelined requests are answered in order, misses included', async () => {
  const a = new Uint8Array(randomBytes(40_000))
  const b = new Uint8Array(0)
  const ha = await sriOf(a)
  const hb = await sriOf(b)
  const { receiver } = pair({ [ha]: a, [hb]: b })
  const results = await Promise.allSettled([receiver.request(ha), receiver.request('sha256-missing'), receiver.request(hb), receiver.request(ha)])
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
  assert.equal(/** @type {any} */ (results[1]).reason.code, 'MGH_ERR_MISS')
  assert.equal(/** @type {any} */ (results[2]).value.bytes.length, 0)
  assert.deepEqual(/** @type {any} */ (results[3]).value.bytes, a)
  assert.ok(receiver.open, 'a miss leaves the channel usable')
})

test('the sender pauses above HIGH_WATER buffered and resumes on bufferedamountlow', async () => {
  const bytes = new Uint8Array(randomBytes(4 << 20))
  const hash = await sriOf(bytes)
  const { ca, receiver } = pair({ [hash]: bytes })
  const got = await receiver.request(hash)
  assert.equal(await sriOf(got.bytes), hash)
  assert.ok(ca.maxBuffered <= HIGH_WATER + CHUNK_BYTES, `buffered at most ${ca.maxBuffered}`)
  assert.ok(ca.lowEvents > 0, 'waited for the buffer to drain')
})

test('a channel that never fires bufferedamountlow (node-webrtc) does not stall the sender: it looks at the buffer itself', async () => {
  const bytes = new Uint8Array(randomBytes(4 << 20))
  const hash = await sriOf(bytes)
  const { ca, receiver } = pair({ [hash]: bytes })
  ca.lowEventsFire = false
  const got = await receiver.request(hash)
  assert.equal(await sriOf(got.bytes), hash)
  assert.ok(ca.maxBuffered <= HIGH_WATER + CHUNK_BYTES, `buffered at most ${ca.maxBuffered}`)
  assert.equal(ca.lowEvents, 0)
})

test('both peers can request over one channel at the same time', async () => {
  const [ca, cb] = channelPair()
  const x = new Uint8Array(randomBytes(50_000))
  const y = new Uint8Array(randomBytes(70_000))
  const hx = await sriOf(x)
  const hy = await sriOf(y)
  const ta = new Transfer(/** @type {any} */ (ca), { serve: async (h) => h === hx ? { bytes: x, type: 'a' } : null })
  const tb = new Transfer(/** @type {any} */ (cb), { serve: async (h) => h === hy ? { bytes: y, type: 'b' } : null })
  const [gotY, gotX] = await Promise.all([ta.request(hy), tb.request(hx)])
  assert.deepEqual(gotY.bytes, y)
  assert.deepEqual(gotX.bytes, x)
})

test('a peer that goes silent fails the request with MGH_ERR_STALL and closes the channel', async (t) => {
  // The stall clock runs on mock time (its timer and Date); the fake channel delivers on setImmediate, which stays real.
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] })
  const { ca, receiver } = pair({}, { stallMs: 50 })
  ca.tap = () => null // the sender's replies never arrive
  const stalled = receiver.request('sha256-x')
  await new Promise((resolve) => setImmediate(resolve)) // the get reaches the sender, whose miss is dropped
  t.mock.timers.tick(49)
  assert.equal(receiver.open, true, 'not stalled before stallMs')
  t.mock.timers.tick(1)
  await assert.rejects(stalled, { code: 'MGH_ERR_STALL' })
  assert.equal(receiver.open, false)
  await assert.rejects(receiver.request('sha256-y'), { code: 'MGH_ERR_STALL' })
})

test('protocol violations close the channel: frames without a header, oversize replies, extra bytes', async () => {
  const bytes = new Uint8Array(randomBytes(1000))
  const hash = await sriOf(bytes)

  let p = pair({ [hash]: bytes })
  p.ca.tap = (m) => typeof m === 'string' ? null : m // drop the header, keep the frames
  await assert.rejects(p.receiver.request(hash), { code: 'MGH_ERR_PEER_PROTOCOL' })

  p = pair({ [hash]: bytes })
  await assert.rejects(p.receiver.request(hash, 999), { code: 'MGH_ERR_PEER_PROTOCOL' })

  p = pair({ [hash]: bytes })
  p.ca.tap = (m) => typeof m === 'string' ? m.replace('"size":1000', '"size":10') : m
  await assert.rejects(p.receiver.request(hash), { code: 'MGH_ERR_PEER_PROTOCOL' })
  assert.equal(p.receiver.open, false)
})

test('a closed channel rejects pending requests; a failing store answers miss', async () => {
  const { cb, receiver } = pair({}, { serve: () => new Promise(() => {}) })
  const pending = receiver.request('sha256-x')
  cb.close()
  await assert.rejects(pending, { code: 'MGH_ERR_CHANNEL_CLOSED' })

  const q = pair({}, { serve: async () => { throw new Error('disk on fire') } })
  await assert.rejects(q.receiver.request('sha256-x'), { code: 'MGH_ERR_MISS' })
})

test('a request flood beyond the queue limit closes the channel', async () => {
  const [ca, cb] = channelPair()
  /** @type {(err: Error) => void} */
  let onClose = () => {}
  /** @type {Promise<Error>} */
  const closed = new Promise((resolve) => { onClose = resolve })
  const sender = new Transfer(/** @type {any} */ (ca), { serve: () => new Promise(() => {}), onClose })
  for (let id = 1; id <= 300; id++) cb.send(JSON.stringify({ t: 'get', id, hash: 'sha256-x' }))
  const err = await closed // the sender closes as the flood arrives
  assert.equal(sender.open, false)
  assert.equal(/** @type {any} */ (err).code, 'MGH_ERR_PEER_PROTOCOL')
  assert.match(err.message, /too many requests/)
})

test('cancel: a request not yet started is answered miss unread, one started is sent in full and dropped; the channel stays in step', async () => {
  const big = new Uint8Array(randomBytes(200_000))
  const small = new Uint8Array(randomBytes(30_000))
  const hb = await sriOf(big)
  const hs = await sriOf(small)
  // The sender is still reading the first asset from its store when the cancel arrives.
  let release = () => {}
  const gate = new Promise((resolve) => { release = () => resolve(undefined) })
  const assets = /** @type {Record<string, Uint8Array>} */ ({ [hb]: big, [hs]: small })
  const { ca, receiver, served } = pair(assets, { serve: async (/** @type {string} */ hash) => { if (hash === hb) await gate; return { bytes: assets[hash], type: 'image/png' } } })
  const first = new AbortController()
  const second = new AbortController()
  let progress = 0
  const a = receiver.request(hb, undefined, { signal: first.signal, onBytes: (n) => { progress += n } })
  const b = receiver.request(hs, undefined, { signal: second.signal })
  // c hears of a's frames (its holder is busy) and of its own, told apart.
  const heard = { own: 0, before: 0 }
  const c = receiver.request(hs, undefined, { onBytes: (n, own) => { heard[own ? 'own' : 'before'] += n } })
  second.abort(new Error('origin won'))
  await assert.rejects(b, /origin won/)
  await new Promise((resolve) => setTimeout(resolve, 10)) // the gets and the cancel have arrived
  release()
  const gotA = await a
  assert.deepEqual(gotA.bytes, big, 'the first, not cancelled, arrives')
  assert.equal(progress, big.length, 'onBytes saw every byte')
  first.abort(new Error('too late')) // after it settled: nothing happens
  assert.deepEqual((await c).bytes, small, 'the request after the cancelled one is served in order')
  assert.deepEqual(heard, { own: small.length, before: big.length })
  assert.deepEqual(served.map((s) => s.hash), [hb, hs], 'the cancelled one was never read or sent')
  assert.ok(ca.sent.some((m) => typeof m === 'string' && JSON.parse(m).t === 'miss'), 'answered miss in its turn')
  assert.ok(receiver.open)
})

test('cancel once bytes flow: the sender stops before its next frame and ends the reply with cut; the next request still gets its own bytes', async () => {
  const big = new Uint8Array(randomBytes(4 << 20))
  const small = new Uint8Array(randomBytes(20_000))
  const hb = await sriOf(big)
  const hs = await sriOf(small)
  const { ca, receiver, served } = pair({ [hb]: big, [hs]: small })
  const ctl = new AbortController()
  const a = receiver.request(hb, undefined, { signal: ctl.signal, onBytes: () => ctl.abort(new Error('origin won')) })
  const b = receiver.request(hs)
  await assert.rejects(a, /origin won/)
  assert.deepEqual((await b).bytes, small)
  assert.ok(receiver.open)
  assert.ok(ca.sent.some((m) => typeof m === 'string' && JSON.parse(m).t === 'cut'), 'the reply was cut short')
  assert.equal(served[0].hash, hb)
  assert.ok(served[0].bytes < big.length / 2, `sent ${served[0].bytes} of ${big.length} bytes`)
  assert.ok(served[0].bytes <= 2 * HIGH_WATER, `about what the buffer held when the cancel came: ${served[0].bytes}`)
})

test('a receiver whose cancel does not ask for a cut (an older client) gets the reply whole, never a cut', async () => {
  const big = new Uint8Array(randomBytes(1 << 20))
  const hb = await sriOf(big)
  // A bare channel on the receiving side: the older client's messages written by hand.
  const [ca, cb] = channelPair()
  const served = /** @type {{ hash: string, bytes: number }[]} */ ([])
  const sender = new Transfer(/** @type {any} */ (ca), { serve: async () => ({ bytes: big, type: 'image/png' }), onServed: (hash, bytes) => served.push({ hash, bytes }) })
  let got = 0
  cb.addEventListener('message', (/** @type {any} */ e) => {
    if (typeof e.data === 'string' && JSON.parse(e.data).t === 'ok') cb.send(JSON.stringify({ t: 'cancel', id: 1 }))
    if (typeof e.data !== 'string') got += e.data.byteLength
  })
  cb.send(JSON.stringify({ t: 'get', id: 1, hash: hb }))
  for (let i = 0; i < 400 && !served.length; i++) await new Promise((resolve) => setTimeout(resolve, 5))
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(got, big.length)
  assert.deepEqual(served, [{ hash: hb, bytes: big.length }])
  assert.ok(!ca.sent.some((m) => typeof m === 'string' && JSON.parse(m).t === 'cut'))
  assert.ok(sender.open)
})

test('a cut the receiver did not ask for closes the channel as a protocol error', async () => {
  const { ca, receiver } = pair({})
  const p = receiver.request('sha256-x')
  ca.send(JSON.stringify({ t: 'cut', id: 1 }))
  await assert.rejects(p, (err) => /** @type {any} */ (err).code === 'MGH_ERR_PEER_PROTOCOL')
  assert.equal(receiver.open, false)
})
