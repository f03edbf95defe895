/**
 * Range headers as media elements send them, and the 206 / 416 answers.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseRange, rangeResponse } from '../src/ranges.js'

test('one byte range: from-to, from to the end, the last N; past the end unsatisfiable; anything else not understood', () => {
  assert.deepEqual(parseRange('bytes=0-', 1000), { start: 0, end: 999 })
  assert.deepEqual(parseRange('bytes=0-99', 1000), { start: 0, end: 99 })
  assert.deepEqual(parseRange('bytes=500-5000', 1000), { start: 500, end: 999 }, 'an end past the size is the last byte')
  assert.deepEqual(parseRange('bytes=-100', 1000), { start: 900, end: 999 })
  assert.deepEqual(parseRange('bytes=-5000', 1000), { start: 0, end: 999 })
  assert.equal(parseRange('bytes=1000-', 1000), 'unsatisfiable')
  assert.equal(parseRange('bytes=-0', 1000), 'unsatisfiable')
  for (const header of ['bytes=0-1,5-9', 'bytes=9-1', 'bytes=-', 'items=0-1', 'bytes=a-b', '']) assert.equal(parseRange(header, 1000), null, header)
})

test('a range is answered 206 with its Content-Range; an unsatisfiable one 416 with the size', async () => {
  const ok = rangeResponse({ start: 10, end: 14 }, 100, 'video/mp4', new Uint8Array([1, 2, 3, 4, 5]))
  assert.equal(ok.status, 206)
  assert.equal(ok.headers.get('content-range'), 'bytes 10-14/100')
  assert.equal(ok.headers.get('content-length'), '5')
  assert.equal(ok.headers.get('content-type'), 'video/mp4')
  assert.equal(ok.headers.get('accept-ranges'), 'bytes')
  assert.deepEqual(new Uint8Array(await ok.arrayBuffer()), new Uint8Array([1, 2, 3, 4, 5]))
  const no = rangeResponse('unsatisfiable', 100, 'video/mp4')
  assert.equal(no.status, 416)
  assert.equal(no.headers.get('content-range'), 'bytes */100')
})
