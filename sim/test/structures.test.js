// The engine's typed-array structures against plain reference implementations, under
// long random operation sequences (seeded, so a failure reproduces).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FLAG_CONT, RequestBatch } from '../src/batch.js'
import { ChannelTable } from '../src/engine/channels.js'
import { ClientStores, SCAN_LIMIT } from '../src/engine/client-stores.js'
import { ByteInterner } from '../src/input/interner.js'
import { gini, lorenz, percentile } from '../src/engine/metrics.js'
import { Rng } from '../src/rng.js'
import { SessionWindow } from '../src/input/session-window.js'
import { SlabLists } from '../src/engine/slab-lists.js'
import { ZipfSampler } from '../src/synthetic/zipf.js'

test('ClientStores behaves as per-client LRU maps, small and table-indexed alike', () => {
  const rng = new Rng(11)
  const stores = new ClientStores()
  stores.ensureClients(50)
  /** @type {Map<number, number[]>} reference: objects per client, least recent first */
  const ref = new Map()
  for (let c = 0; c < 50; c++) ref.set(c, [])
  for (let step = 0; step < 40_000; step++) {
    // a few clients get big stores, to cross SCAN_LIMIT into the table
    const c = rng.random() < 0.3 ? rng.int(3) : rng.int(50)
    const o = rng.int(c < 3 ? 400 : 60)
    const list = /** @type {number[]} */ (ref.get(c))
    const pos = stores.find(c, o)
    const at = list.indexOf(o)
    assert.equal(pos !== -1, at !== -1, `step ${step}: find(${c}, ${o})`)
    if (pos !== -1) {
      assert.equal(stores.objectAt(c, pos), o)
      stores.touch(c, pos)
      list.splice(at, 1)
      list.push(o)
    } else if (list.length > 0 && rng.random() < 0.3) {
      const victim = stores.lruOf(c)
      assert.equal(stores.objectAt(c, victim), list[0], `step ${step}: LRU of ${c}`)
      stores.removeAt(c, victim)
      list.shift()
    } else {
      stores.insert(c, o, 10 + o)
      list.push(o)
    }
    assert.equal(stores.count(c), list.length)
  }
  let live = 0
  for (const [c, list] of ref) {
    live += list.length
    assert.equal(stores.bytes[c], list.reduce((a, o) => a + 10 + o, 0))
  }
  assert.equal(stores.live, live)
  assert.ok([0, 1, 2].some((c) => /** @type {number[]} */ (ref.get(c)).length > SCAN_LIMIT), 'some store was big enough to be indexed')
  assert.equal(stores.tableUsed, [0, 1, 2].filter((c) => stores.indexed[c]).reduce((a, c) => a + stores.count(c), 0))
})

test('ClientStores keeps sizes up to 4 GiB − 1 exact', () => {
  const stores = new ClientStores()
  stores.ensureClients(2)
  stores.insert(1, 9, 0xffffffff)
  stores.insert(1, 10, 3e9)
  assert.equal(stores.bytes[1], 0xffffffff + 3e9)
  stores.removeAt(1, stores.find(1, 9))
  assert.equal(stores.bytes[1], 3e9)
  stores.removeAt(1, stores.find(1, 10))
  assert.equal(stores.bytes[1], 0)
})

for (const [stride, inline] of [[2, 0], [2, 2], [3, 1]]) {
  test(`SlabLists keep every list intact through growth, removal and reuse of blocks (${stride} fields a record, ${inline} inline)`, () => {
    const rng = new Rng(5)
    const lists = new SlabLists(stride, inline)
    /** @type {number[][]} */
    const ref = Array.from({ length: 30 }, () => [])
    let sawInline = false
    let sawBlock = false
    for (let step = 0; step < 30_000; step++) {
      // owners past 20 stay short, so inline lists (and lists moving out of them) are common
      const o = rng.int(30)
      const r = ref[o]
      if (r.length > 0 && rng.random() < (o >= 20 ? 0.6 : 0.45)) {
        const pos = rng.int(r.length)
        const moved = lists.removeAt(o, pos)
        const last = /** @type {number} */ (r.pop())
        if (pos < r.length) {
          r[pos] = last
          assert.equal(moved, last)
        } else {
          assert.equal(moved, -1)
        }
      } else if (rng.random() < 0.01) {
        lists.clear(o)
        r.length = 0
      } else {
        const item = rng.int(1e6)
        const pos = lists.push(o, item, item * 3)
        // fields past the second are the caller's to fill
        for (let f = 2; f < stride; f++) lists.data(o)[lists.base(o) + pos * stride + f] = item * (f + 3)
        r.push(item)
      }
      if (lists.data(o) === lists.meta) sawInline ||= r.length > 0
      else sawBlock = true
      assert.ok(lists.data(o) === lists.pool || r.length <= inline, 'only short lists are inline')
    }
    assert.equal(sawInline, inline > 0)
    assert.ok(sawBlock)
    let total = 0
    for (let o = 0; o < 30; o++) {
      assert.equal(lists.length(o), ref[o].length)
      total += ref[o].length
      const data = lists.data(o)
      const base = lists.base(o)
      for (let i = 0; i < ref[o].length; i++) {
        assert.equal(data[base + i * stride], ref[o][i])
        assert.equal(data[base + i * stride + 1], ref[o][i] * 3)
        for (let f = 2; f < stride; f++) assert.equal(data[base + i * stride + f], ref[o][i] * (f + 3))
      }
    }
    assert.equal(lists.total, total)
  })
}

test('SlabLists hand out disjoint blocks, and a fresh owner is an empty list without being touched', () => {
  const lists = new SlabLists(2)
  lists.ensureOwners(5000)
  for (let o = 0; o < 5000; o++) assert.equal(lists.length(o), 0)
  // fill many owners to different sizes; every record must survive the others' growth
  for (let round = 0; round < 40; round++) {
    for (let o = 0; o < 50; o++) if (round < o) lists.push(o, o * 1000 + round, -o)
  }
  for (let o = 0; o < 50; o++) {
    const n = Math.min(40, o)
    assert.equal(lists.length(o), n)
    for (let i = 0; i < n; i++) {
      assert.equal(lists.pool[lists.base(o) + i * 2], o * 1000 + i)
      assert.equal(lists.pool[lists.base(o) + i * 2 + 1], -o)
    }
  }
  assert.throws(() => new SlabLists(1), TypeError)
})

test('ChannelTable remembers the peer session each channel reached, until reset', () => {
  const ch = new ChannelTable()
  ch.ensureOwners(10)
  assert.equal(ch.peerSession(1, 2), -1)
  ch.open(1, 2, 7)
  ch.open(1, 3, 4)
  ch.open(1, 2, 8) // a newer channel to the same peer replaces the old
  assert.equal(ch.peerSession(1, 2), 8)
  assert.equal(ch.peerSession(1, 3), 4)
  assert.equal(ch.peerSession(2, 1), -1) // channels are recorded on the asker's side
  ch.reset(1)
  assert.equal(ch.peerSession(1, 2), -1)
  for (let p = 0; p < 100; p++) ch.open(5, p, p)
  for (let p = 0; p < 100; p++) assert.equal(ch.peerSession(5, p), p)
})

test('SessionWindow marks exactly the requests followed by the same client within the gap', () => {
  const rng = new Rng(9)
  const n = 5000
  const rows = []
  let t = 0
  for (let i = 0; i < n; i++) {
    t += rng.exponential(3)
    rows.push([t, rng.int(40)])
  }
  const gap = 60
  /** @type {number[]} */
  const flags = []
  const w = new SessionWindow(gap, (b) => {
    for (let i = 0; i < b.n; i++) flags.push(b.flags[i] & FLAG_CONT)
  })
  const b = new RequestBatch(100)
  for (const [ts, c] of rows) {
    b.push(ts, c, 0, 1, 0)
    if (b.full()) {
      w.push(b)
      b.n = 0
    }
  }
  w.push(b)
  w.flush()
  assert.equal(flags.length, n)
  for (let i = 0; i < n; i++) {
    let expected = 0
    for (let j = i + 1; j < n && rows[j][0] - rows[i][0] <= gap; j++) {
      if (rows[j][1] === rows[i][1]) {
        expected = FLAG_CONT
        break
      }
    }
    assert.equal(flags[i], expected, `request ${i}`)
  }
})

test('ByteInterner gives dense ids in order of first appearance and keeps the bytes', () => {
  const interner = new ByteInterner()
  const words = Array.from({ length: 20_000 }, (_, i) => `/img/${(i * 7919) % 5000}.jpg`)
  const ids = words.map((w) => {
    const buf = Buffer.from(`xx${w}yy`, 'latin1')
    return interner.intern(buf, 2, buf.length - 2)
  })
  assert.equal(interner.size, 5000)
  assert.equal(ids[0], 0)
  for (let i = 0; i < words.length; i++) assert.equal(interner.string(ids[i]), words[i])
  assert.equal(Math.max(...ids), 4999)
})

test('statistics helpers: Gini, percentiles, Lorenz curve', () => {
  assert.equal(gini(new Float64Array([5, 5, 5, 5])), 0)
  assert.equal(gini(new Float64Array([0, 0, 0, 10])), 0.75) // (n-1)/n for one holder of all
  assert.equal(percentile(new Float64Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 90), 9)
  assert.equal(percentile(new Float64Array([1, 2, 3]), 99), 3)
  const curve = lorenz(new Float64Array([0, 0, 5, 5]))
  assert.deepEqual(curve[0], [0, 0])
  assert.deepEqual(curve[curve.length - 1], [1, 1])
})

test('ZipfSampler draws ranks with the right probabilities', () => {
  const z = new ZipfSampler(100, 1)
  const rng = new Rng(2)
  const counts = new Float64Array(100)
  const draws = 200_000
  for (let i = 0; i < draws; i++) counts[z.sample(rng)]++
  let h = 0
  for (let r = 1; r <= 100; r++) h += 1 / r
  for (const r of [0, 1, 9, 99]) {
    const p = 1 / (r + 1) / h
    const sd = Math.sqrt(draws * p * (1 - p))
    assert.ok(Math.abs(counts[r] - draws * p) < 5 * sd, `rank ${r}: ${counts[r]} vs ${draws * p}`)
  }
})
