/**
 * Prometheus metrics for one coordinator, served at `GET /metrics`: its own
 * counters, gauges and histograms (prefix `maygh_`) in a registry of its own,
 * so several coordinators in one process (the tests) never clash, merged with
 * the process metrics (`process_*`, `nodejs_*`), which are collected once per
 * process because there is one process to describe, however many coordinators
 * run in it.
 *
 * No metric is labelled by shard: each coordinator is its own scrape target,
 * so Prometheus already tells them apart by `instance`, and a shard's name
 * changes with every start (random suffix), which would open new series each
 * restart. `maygh_shard_info{shard} 1` ties the name to the instance instead.
 *
 * The hot path never builds a label object: every label value a call can take
 * is bound once, here; a type or code from outside that is not ours counts
 * as `other`.
 */
import { performance } from 'node:perf_hooks'
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { COORDINATOR_ERRORS, REPORT_REASONS, REQUEST_TYPES, USAGE_SOURCES } from '../../protocol/index.js'

/** Why a socket closed: the values of `maygh_closes_total{reason}`. */
export const CLOSE_REASONS = Object.freeze({
  client: 'the client closed the socket, or it ended',
  ping_timeout: 'missed a ping (heartbeat.js)',
  rate_limited: 'closed for sending far over its rate limit',
  slow_reader: 'closed because its send buffer grew too large',
  too_large: 'sent a frame over hardMaxMessageBytes (1009)',
  protocol_error: 'broke the WebSocket protocol (ws reported an error)',
  join_deadline: 'did not join in time',
  origin: 'its page\'s origin is not in allowedOrigins',
  token: 'joined with a missing, malformed, forged, expired or foreign token',
  draining: 'closed while this coordinator drains (1012)',
  shutdown: 'closed as this coordinator stops (1012)',
  other: 'any reason not listed here'
})

/** What `maygh_store_seconds{op}` times: the store calls a coordinator makes. */
export const STORE_OPS = Object.freeze(['lookup', 'join', 'update', 'leave', 'relay', 'beat', 'reap'])

/** Where a `connect` went: a socket on this shard, or the bus to another shard. */
export const RELAY_PATHS = Object.freeze(['local', 'bus'])

/** Seconds, 0.1 ms to 1 s (storeTimeoutMs defaults to 1 s; slower goes to +Inf). */
export const LATENCY_BUCKETS = Object.freeze([0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1])

/** @typedef {keyof typeof CLOSE_REASONS} CloseReason */
/** @typedef {'lookup' | 'join' | 'update' | 'leave' | 'relay' | 'beat' | 'reap'} StoreOp */
/** @typedef {'local' | 'bus'} RelayPath */

/**
 * @typedef {object} GaugeSources read when Prometheus scrapes, so that nothing
 *   on the hot path keeps a gauge in step
 * @property {() => number} connections open sockets
 * @property {() => number} peers peers joined on this shard (not fetch-only)
 * @property {() => number} fetchOnlyPeers fetch-only peers joined on this shard (service workers' sockets)
 * @property {() => number} shardsLive live shards, this one included
 * @property {() => boolean} storeUp whether the store answers
 * @property {() => Promise<[string, import('./store/store.js').UsageCounts][]>} siteUsage every site's
 *   usage totals, from the store (every shard's visitors')
 */

/** @type {Registry | null} */
let processRegistry = null

/** @returns {Registry} the one registry of process metrics, made on first use */
function processMetrics () {
  if (processRegistry === null) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export class Metrics {
  /**
   * @param {object} options
   * @param {string} options.shard this coordinator's shard name, for `maygh_shard_info`
   * @param {GaugeSources} options.gauges
   */
  constructor ({ shard, gauges }) {
    const own = new Registry()
    const registers = [own]

    new Gauge({ name: 'maygh_shard_info', help: 'this coordinator\'s shard name (always 1)', labelNames: ['shard'], registers }).set({ shard }, 1)
    sampled(registers, 'maygh_connections', 'open WebSocket connections', gauges.connections)
    sampled(registers, 'maygh_peers', 'peers joined on this shard (pages; service workers\' fetch-only sockets are maygh_fetch_only_peers)', gauges.peers)
    sampled(registers, 'maygh_fetch_only_peers', 'service workers\' fetch-only sockets joined on this shard', gauges.fetchOnlyPeers)
    sampled(registers, 'maygh_shards_live', 'live coordinator shards, this one included', gauges.shardsLive)
    sampled(registers, 'maygh_store_up', '1 while the store answers, else 0', () => (gauges.storeUp() ? 1 : 0))
    // Per site, from the store: the same figures on every shard (sum by instance is not meaningful; take any one).
    // A counter (the totals only grow), whose value is the store's total at each scrape: reset, then set by inc.
    new Counter({ // eslint-disable-line no-new
      name: 'maygh_site_bytes_total',
      help: 'asset bytes the visitors of a site reported over every shard, by source (peer, origin, cache: where they got them; served: what they sent to peers)',
      labelNames: ['site', 'source'],
      registers,
      async collect () {
        const usage = await gauges.siteUsage().catch(() => [])
        this.reset()
        for (const [site, counts] of usage) {
          for (const source of USAGE_SOURCES) this.inc({ site, source }, counts[source])
        }
      }
    })

    const counter = (/** @type {string} */ name, /** @type {string} */ help, /** @type {string} */ label) => new Counter({ name, help, labelNames: [label], registers })

    // Counted per frame (and per lookup) in plain integers, added to the counter when it is scraped.
    this.received = tallies(registers, 'maygh_messages_total', 'frames received, by message type (other: unparsable or not a request)', 'type', [...REQUEST_TYPES, 'other'])
    this.lookups = tallies(registers, 'maygh_lookups_total', 'lookups answered, by whether any holder was found', 'result', ['hit', 'miss'])
    this.errors = countersFor(counter('maygh_errors_total', 'coded errors replied to clients, by code', 'code'), [...Object.keys(COORDINATOR_ERRORS), 'other'])
    this.closes = countersFor(counter('maygh_closes_total', `sockets closed, by reason (${Object.keys(CLOSE_REASONS).join(', ')})`, 'reason'), Object.keys(CLOSE_REASONS))
    this.usageBytes = countersFor(counter('maygh_usage_bytes_total', 'asset bytes this shard\'s visitors reported, by source (peer, origin, cache: where they got them; served: what they sent to peers)', 'source'), [...USAGE_SOURCES])
    this.usageRepeats = new Counter({ name: 'maygh_usage_repeats_total', help: 'usage reports not counted: their id had been counted for the site (a report two pages of a visitor both sent)', registers })
    this.reports = countersFor(counter('maygh_reports_total', 'reports of peers by the peers they failed, by reason', 'reason'), [...REPORT_REASONS])
    this.quarantines = new Counter({ name: 'maygh_quarantines_total', help: 'peers of this shard quarantined (reported by reportThreshold visitors)', registers })
    this.withdrawals = new Counter({ name: 'maygh_withdrawals_total', help: 'peers that stopped serving mid-session (upload budget spent, opted out, Save-Data): update {serving: false}', registers })
    this.heldChecks = new Counter({ name: 'maygh_held_checks_total', help: 'held checks answered (the held message, or GET /held): a service worker asking which assets any visitor holds before its page has joined', registers })
    this.dropped = new Counter({ name: 'maygh_dropped_frames_total', help: 'frames the rate limiter dropped without a reply', registers })
    this.withheld = new Counter({ name: 'maygh_withheld_holders_total', help: 'holders a lookup did not name because the asker had spent its allowance of holders it did not know (newHolderBurst)', registers })
    this.relay = new Timings(own, 'maygh_relay_seconds', 'time to hand a connect to the target socket (local) or to the bus (bus)', 'path', RELAY_PATHS)
    this.store = new Timings(own, 'maygh_store_seconds', 'store call latency, by operation (a lookup message of many assets is timed once, its calls sent together)', 'op', STORE_OPS)

    this.registry = Registry.merge([own, processMetrics()])
  }

  /** @param {string} type a message's `type` ('other' for anything else) */
  countMessage (type) {
    if (Object.hasOwn(this.received, type)) this.received[type]++
    else this.received.other++
  }

  /** @param {string} reason one of REPORT_REASONS */
  countReport (reason) {
    this.reports[reason]?.inc()
  }

  countQuarantine () {
    this.quarantines.inc()
  }

  countWithdrawal () {
    this.withdrawals.inc()
  }

  /**
   * Lookups answered, counted per asset (a page's lookup of many assets counts as many).
   * @param {number} hits those that found a holder
   * @param {number} misses those that found none
   */
  countLookups (hits, misses) {
    this.lookups.hit += hits
    this.lookups.miss += misses
  }

  /** @param {string} code the `MGH_ERR_*` code replied (not a coordinator code: counted as other) */
  countError (code) {
    (this.errors[code] ?? this.errors.other).inc()
  }

  /** @param {CloseReason} reason */
  countClose (reason) {
    (this.closes[reason] ?? this.closes.other).inc()
  }

  /** A held check answered (`held`, or `GET /held`). */
  countHeldCheck () {
    this.heldChecks.inc()
  }

  /** A frame the rate limiter dropped without replying. */
  countDropped () {
    this.dropped.inc()
  }

  /**
   * @param {RelayPath} path
   * @param {number} ms how long the hand-over took, in milliseconds
   */
  observeRelay (path, ms) {
    this.relay.observe(path, ms / 1000)
  }

  /**
   * @param {StoreOp} op
   * @param {number} ms how long the store call took, in milliseconds
   */
  observeStore (op, ms) {
    this.store.observe(op, ms / 1000)
  }

  /**
   * Time one store call, whether it resolves or rejects.
   * @template T
   * @param {StoreOp} op
   * @param {() => Promise<T>} call
   * @returns {Promise<T>} what `call` returns
   */
  async timeStore (op, call) {
    const start = performance.now()
    try {
      return await call()
    } finally {
      this.observeStore(op, performance.now() - start)
    }
  }

  /** @returns {Promise<{ contentType: string, body: string }>} the exposition for `GET /metrics` */
  async text () {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() }
  }
}

/**
 * A gauge whose value is read when scraped.
 * @param {Registry[]} registers
 * @param {string} name
 * @param {string} help
 * @param {() => number} read
 */
function sampled (registers, name, help, read) {
  new Gauge({ name, help, registers, collect () { this.set(read()) } }) // eslint-disable-line no-new
}

/**
 * One bound child per label value, each exposed at 0 before its first count,
 * so that `rate()` sees every series from the start. A null prototype: a
 * value from outside (a type, a code) never finds an inherited property.
 * @param {Counter<string>} counter with exactly one label
 * @param {readonly string[]} values
 * @returns {Record<string, Counter.Internal>}
 */
function countersFor (counter, values) {
  /** @type {Record<string, Counter.Internal>} */
  const children = Object.create(null)
  for (const value of values) {
    children[value] = counter.labels(value)
    children[value].inc(0)
  }
  return children
}

/**
 * A counter with one label whose hot path is a plain integer per value, added
 * to the counter when Prometheus scrapes (prom-client's `inc` hashes and
 * validates its labels on every call). Every series is exposed from the start.
 * @param {Registry[]} registers
 * @param {string} name
 * @param {string} help
 * @param {string} label
 * @param {readonly string[]} values
 * @returns {Record<string, number>} counts since the last scrape, by value: add to them
 */
function tallies (registers, name, help, label, values) {
  /** @type {Record<string, number>} */
  const counts = Object.create(null)
  for (const value of values) counts[value] = 0
  const counter = new Counter({
    name,
    help,
    labelNames: [label],
    registers,
    collect () {
      for (const value of values) {
        if (counts[value] === 0) continue
        this.inc({ [label]: value }, counts[value])
        counts[value] = 0
      }
    }
  })
  for (const value of values) counter.inc({ [label]: value }, 0)
  return counts
}

/**
 * A histogram of latencies (LATENCY_BUCKETS) with one label, observed into
 * plain arrays and read by prom-client's registry when it is scraped, as it
 * reads its own metrics (`get()`, in the same shape). prom-client's
 * `observe` builds, validates and hashes a label object per call: 2.5 % of
 * the coordinator's CPU under load, at three observations per transaction.
 */
class Timings {
  /**
   * @param {Registry} registry
   * @param {string} name
   * @param {string} help
   * @param {string} label
   * @param {readonly string[]} values every value the label takes (each series is exposed from the start)
   */
  constructor (registry, name, help, label, values) {
    this.name = name
    this.help = help
    this.label = label
    /** @type {Record<string, { counts: Float64Array, sum: number }>} per label value: observations per bucket (the last above every bound), their sum */
    this.series = Object.create(null)
    for (const value of values) this.series[value] = { counts: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0 }
    registry.registerMetric(/** @type {any} */ (this))
  }

  /**
   * @param {string} value the label's
   * @param {number} seconds
   */
  observe (value, seconds) {
    const series = this.series[value]
    let bucket = 0
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]) bucket++
    series.counts[bucket]++
    series.sum += seconds
  }

  /** What prom-client's registry reads of a metric (as its Histogram's `get`): cumulative buckets, sum and count per series. */
  get () {
    /** @type {{ labels: Record<string, string | number>, value: number, metricName: string }[]} */
    const values = []
    for (const [value, { counts, sum }] of Object.entries(this.series)) {
      let total = 0
      for (let bucket = 0; bucket <= LATENCY_BUCKETS.length; bucket++) {
        total += counts[bucket]
        values.push({ labels: { le: bucket < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[bucket] : '+Inf', [this.label]: value }, value: total, metricName: `${this.name}_bucket` })
      }
      values.push({ labels: { [this.label]: value }, value: sum, metricName: `${this.name}_sum` })
      values.push({ labels: { [this.label]: value }, value: total, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' }
  }

  /** Start again from zero (prom-client's `Registry#resetMetrics` calls this). */
  reset () {
    for (const series of Object.values(this.series)) {
      series.counts.fill(0)
      series.sum = 0
    }
  }
}
