import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CLOSE_REASONS, Metrics, STORE_OPS } from '../src/metrics.js'
import { COORDINATOR_ERRORS, REQUEST_TYPES } from '../../protocol/index.js'

/**
 * A Metrics whose gauges read `state`.
 * @param {{ connections?: number, peers?: number, shardsLive?: number, storeUp?: boolean, siteUsage?: [string, import('../src/store/store.js').UsageCounts][] }} [state]
 */
function metricsOf (state = {}) {
  /** @type {{ connections: number, peers: number, shardsLive: number, storeUp: boolean, siteUsage: [string, import('../src/store/store.js').UsageCounts][] }} */
  const s = { connections: 0, peers: 0, shardsLive: 1, storeUp: true, siteUsage: [], ...state }
  const metrics = new Metrics({
    shard: 'a.XYZ',
    gauges: { connections: () => s.connections, peers: () => s.peers, fetchOnlyPeers: () => 0, shardsLive: () => s.shardsLive, storeUp: () => s.storeUp, siteUsage: async () => s.siteUsage }
  })
  return { metrics, state: s }
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABELS = '\\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*",?)*\\}'
// prom-client writes NaN as `Nan` (an event-loop lag before its first sample);
// Prometheus reads floats with Go's ParseFloat, which takes NaN in any case.
const SAMPLE = new RegExp(`^(${NAME})(${LABELS})? (-?[0-9.]+(?:e[+-]?[0-9]+)?|[Nn]a[Nn]|[+-]Inf)$`)

/**
 * Parse the Prometheus text format strictly enough to fail on anything malformed.
 * @param {string} body
 * @returns {{ types: Map<string, string>, samples: Map<string, number> }} family → type; `name{labels}` → value
 */
function parseExposition (body) {
  const types = new Map()
  const helped = new Set()
  const samples = new Map()
  assert.ok(body.endsWith('\n'), 'exposition ends with a newline')
  for (const line of body.split('\n')) {
    if (line === '') continue
    let m
    if ((m = line.match(new RegExp(`^# HELP (${NAME}) .+$`)))) {
      helped.add(m[1])
    } else if ((m = line.match(new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`)))) {
      assert.ok(!types.has(m[1]), `${m[1]} declared twice`)
      types.set(m[1], m[2])
    } else {
      m = line.match(SAMPLE)
      assert.ok(m, `not a valid sample line: ${line}`)
      const family = types.has(m[1]) ? m[1] : m[1].replace(/_(bucket|sum|count)$/, '')
      assert.ok(types.has(family), `sample ${m[1]} has no # TYPE`)
      assert.ok(helped.has(family), `sample ${m[1]} has no # HELP`)
      samples.set(m[1] + (m[2] ?? ''), Number(m[3]))
    }
  }
  return { types, samples }
}

test('counters and histograms move, unknown values count as other', async () => {
  const { metrics } = metricsOf()
  metrics.countMessage('lookup')
  metrics.countMessage('lookup')
  metrics.countMessage('__proto__')
  metrics.countLookups(1, 2)
  metrics.countError('MGH_ERR_BAD_JSON')
  metrics.countError('WS_ERR_SOMETHING')
  metrics.countClose('ping_timeout')
  metrics.countDropped()
  metrics.observeRelay('local', 0.3)
  metrics.observeStore('lookup', 2)
  assert.equal(await metrics.timeStore('join', async () => 'done'), 'done')
  await assert.rejects(metrics.timeStore('leave', async () => { throw new Error('down') }), /down/)

  const { samples } = parseExposition((await metrics.text()).body)
  assert.equal(samples.get('maygh_messages_total{type="lookup"}'), 2)
  assert.equal(samples.get('maygh_messages_total{type="other"}'), 1)
  assert.equal(samples.get('maygh_messages_total{type="join"}'), 0)
  assert.equal(samples.get('maygh_lookups_total{result="hit"}'), 1)
  assert.equal(samples.get('maygh_lookups_total{result="miss"}'), 2)
  assert.equal(samples.get('maygh_errors_total{code="MGH_ERR_BAD_JSON"}'), 1)
  assert.equal(samples.get('maygh_errors_total{code="other"}'), 1)
  assert.equal(samples.get('maygh_closes_total{reason="ping_timeout"}'), 1)
  assert.equal(samples.get('maygh_closes_total{reason="client"}'), 0)
  assert.equal(samples.get('maygh_dropped_frames_total'), 1)
  // 0.3 ms lands in the 0.5 ms bucket, not the 0.25 ms one
  assert.equal(samples.get('maygh_relay_seconds_bucket{le="0.00025",path="local"}'), 0)
  assert.equal(samples.get('maygh_relay_seconds_bucket{le="0.0005",path="local"}'), 1)
  assert.equal(samples.get('maygh_relay_seconds_count{path="local"}'), 1)
  assert.equal(samples.get('maygh_relay_seconds_count{path="bus"}'), 0)
  assert.equal(samples.get('maygh_store_seconds_bucket{le="0.0025",op="lookup"}'), 1)
  assert.equal(samples.get('maygh_store_seconds_count{op="join"}'), 1)
  assert.equal(samples.get('maygh_store_seconds_count{op="leave"}'), 1, 'a failed call is timed too')
})

test('text() is valid Prometheus exposition with every metric, ours and the process\'s', async () => {
  const { metrics } = metricsOf()
  const { contentType, body } = await metrics.text()
  assert.match(contentType, /^text\/plain; version=0\.0\.4/)
  const { types, samples } = parseExposition(body)
  const expected = {
    maygh_shard_info: 'gauge',
    maygh_connections: 'gauge',
    maygh_peers: 'gauge',
    maygh_shards_live: 'gauge',
    maygh_store_up: 'gauge',
    maygh_messages_total: 'counter',
    maygh_lookups_total: 'counter',
    maygh_errors_total: 'counter',
    maygh_closes_total: 'counter',
    maygh_dropped_frames_total: 'counter',
    maygh_relay_seconds: 'histogram',
    maygh_store_seconds: 'histogram',
    process_cpu_user_seconds_total: 'counter',
    nodejs_heap_size_used_bytes: 'gauge'
  }
  for (const [name, type] of Object.entries(expected)) assert.equal(types.get(name), type, name)
  assert.equal(samples.get('maygh_shard_info{shard="a.XYZ"}'), 1)
  // every label value is there from the start, so rate() sees each series begin
  for (const type of REQUEST_TYPES) assert.equal(samples.get(`maygh_messages_total{type="${type}"}`), 0)
  for (const code of Object.keys(COORDINATOR_ERRORS)) assert.equal(samples.get(`maygh_errors_total{code="${code}"}`), 0)
  for (const reason of Object.keys(CLOSE_REASONS)) assert.equal(samples.get(`maygh_closes_total{reason="${reason}"}`), 0)
  for (const op of STORE_OPS) assert.equal(samples.get(`maygh_store_seconds_count{op="${op}"}`), 0)
  assert.ok(![...samples.keys()].some((k) => k.startsWith('maygh_') && k.includes('shard=') && !k.startsWith('maygh_shard_info')), 'only the info metric names the shard')
})

test('names as Prometheus users expect: counters end in _total and only counters do, histograms name their unit', async () => {
  const { metrics } = metricsOf({ siteUsage: [['https://shop.example', { peer: 1, origin: 1, cache: 1, served: 1 }]] })
  const { types } = parseExposition((await metrics.text()).body)
  const ours = [...types].filter(([name]) => name.startsWith('maygh_'))
  assert.ok(ours.length >= 15, `${ours.length} maygh_ metrics`)
  for (const [name, type] of ours) {
    assert.equal(name.endsWith('_total'), type === 'counter', `${name} (${type})`)
    if (type === 'histogram') assert.match(name, /_(seconds|bytes)$/, name)
  }
})

test('gauges are read when scraped', async () => {
  const { metrics, state } = metricsOf({ connections: 3, peers: 2, shardsLive: 4, storeUp: true })
  let { samples } = parseExposition((await metrics.text()).body)
  assert.deepEqual(['maygh_connections', 'maygh_peers', 'maygh_shards_live', 'maygh_store_up'].map((n) => samples.get(n)), [3, 2, 4, 1])
  Object.assign(state, { connections: 5, peers: 0, shardsLive: 1, storeUp: false });
  ({ samples } = parseExposition((await metrics.text()).body))
  assert.deepEqual(['maygh_connections', 'maygh_peers', 'maygh_shards_live', 'maygh_store_up'].map((n) => samples.get(n)), [5, 0, 1, 0])
})

test('usage: this shard\'s reported bytes by source, and every site\'s totals from the store when scraped', async () => {
  const { metrics, state } = metricsOf({ siteUsage: [['https://shop.example', { peer: 700, origin: 300, cache: 50, served: 650 }]] })
  metrics.usageBytes.peer.inc(700)
  let { samples, types } = parseExposition((await metrics.text()).body)
  assert.equal(types.get('maygh_usage_bytes_total'), 'counter')
  assert.equal(samples.get('maygh_usage_bytes_total{source="peer"}'), 700)
  assert.equal(samples.get('maygh_usage_bytes_total{source="served"}'), 0)
  assert.equal(types.get('maygh_site_bytes_total'), 'counter')
  assert.equal(samples.get('maygh_site_bytes_total{site="https://shop.example",source="peer"}'), 700)
  assert.equal(samples.get('maygh_site_bytes_total{site="https://shop.example",source="origin"}'), 300)
  state.siteUsage = [['https://other.example', { peer: 1, origin: 2, cache: 3, served: 4 }]];
  ({ samples } = parseExposition((await metrics.text()).body))
  assert.equal(samples.get('maygh_site_bytes_total{site="https://shop.example",source="peer"}'), undefined, 'a site the store no longer lists is gone')
  assert.equal(samples.get('maygh_site_bytes_total{site="https://other.example",source="served"}'), 4)
})

test('two coordinators in one process keep their own counts', async () => {
  const a = metricsOf().metrics
  const b = metricsOf().metrics
  a.countMessage('join')
  a.countError('MGH_ERR_STORE')
  b.countMessage('update')
  const sa = parseExposition((await a.text()).body).samples
  const sb = parseExposition((await b.text()).body).samples
  assert.deepEqual([sa.get('maygh_messages_total{type="join"}'), sa.get('maygh_messages_total{type="update"}'), sa.get('maygh_errors_total{code="MGH_ERR_STORE"}')], [1, 0, 1])
  assert.deepEqual([sb.get('maygh_messages_total{type="join"}'), sb.get('maygh_messages_total{type="update"}'), sb.get('maygh_errors_total{code="MGH_ERR_STORE"}')], [0, 1, 0])
  assert.ok(sb.has('process_cpu_user_seconds_total'), 'both carry the process metrics')
})
