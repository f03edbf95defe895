// The hedge rule's preferences replayed on the same input: savings waits for every peer, balanced
// for the ones below the fold and the large ones in view, latency for none; the config takes the
// client's preferences and its default.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { HEDGE_DEFAULTS, HEDGE_PREFERENCES } from '../../policy/hedge-rule.js'
import { SIM_DEFAULTS, SIM_OPTION_SPECS, resolveConfig } from '../src/config.js'
import { Engine } from '../src/engine/engine.js'
import { SessionWindow } from '../src/input/session-window.js'
import { EtsyGenerator } from '../src/synthetic/synthetic-etsy.js'
import { racingArb, traceArb, traceBatch } from './random-traces.js'

/** the client's preferences, in the order of their deadlines: latency's are the soonest, savings has none */
const PREFERENCES = /** @type {const} */ (['latency', 'balanced', 'savings'])

/**
 * Replays batches through one engine (the reference model's agreement is reference-model.test.js's).
 * @param {Partial<import('../src/config.js').SimConfig>} options
 * @param {Iterable<import('../src/batch.js').RequestBatch>} batches
 * @returns {import('../src/engine/engine-result.js').EngineResult}
 */
function replay (options, batches) {
  const config = resolveConfig({ pluginAdoption: 0, ...options })
  const engine = new Engine(config)
  const window = new SessionWindow(config.sessionGap, (b) => engine.processBatch(b))
  for (const b of batches) window.push(b)
  window.flush()
  return engine.finish()
}

test('--hedge takes the client\'s preferences or off, and defaults to the client\'s', () => {
  assert.deepEqual(SIM_OPTION_SPECS.hedge.values, [...HEDGE_PREFERENCES, 'off'])
  assert.equal(SIM_DEFAULTS.hedge, HEDGE_DEFAULTS.hedge)
  for (const hedge of [...HEDGE_PREFERENCES, /** @type {const} */ ('off')]) assert.equal(resolveConfig({ hedge }).hedge, hedge)
  // the old spelling is refused, not read as some preference
  assert.throws(() => resolveConfig({ hedge: /** @type {any} */ ('on') }), { code: 'MGH_SIM_ERR_BAD_VALUE', message: /--hedge on is not one of balanced, latency, savings, off/ })
})

test('without upload budgets, on any trace: the same lookups under every preference; savings loses no race and serves the most, then balanced, then latency', () => {
  let balancedAhead = 0
  let savingsAhead = 0
  fc.assert(fc.property(racingArb, traceArb, ({ extraSample, ...options }, trace) => {
    // upload budgets and caps are what a peer's wins change for later requests: without them
    // the state is the same under every preference, and only who wins each race differs
    const base = { ...options, candidateSample: options.maxHolders + extraSample, uploadSession: Infinity, uploadDay: Infinity, uploadRate: Infinity }
    const [latency, balanced, savings] = PREFERENCES.map((hedge) => replay({ ...base, hedge }, [traceBatch(trace)]))
    for (const r of [balanced, savings]) {
      assert.equal(r.coordinator.lookupHits, latency.coordinator.lookupHits)
      assert.deepEqual(r.connections, latency.connections)
    }
    assert.equal(savings.hedge.racesLost, 0)
    assert.ok(savings.peerRequests >= balanced.peerRequests && savings.peerBytes >= balanced.peerBytes, 'savings ≥ balanced')
    assert.ok(balanced.peerRequests >= latency.peerRequests && balanced.peerBytes >= latency.peerBytes, 'balanced ≥ latency')
    // the same holder answers under every preference: a race the origin won is a peer's win under savings
    assert.equal(savings.peerRequests, balanced.peerRequests + balanced.hedge.racesLost)
    assert.equal(savings.peerRequests, latency.peerRequests + latency.hedge.racesLost)
    if (balanced.peerBytes > latency.peerBytes) balancedAhead++
    if (savings.peerBytes > balanced.peerBytes) savingsAhead++
  }), { numRuns: 300, seed: 20261126 })
  // not a test that cannot fail: the orders were strict on some traces
  assert.ok(balancedAhead > 5 && savingsAhead > 5, `balanced ahead on ${balancedAhead} traces, savings on ${savingsAhead}`)
})

test('a synthetic day at the defaults (upload budgets on): savings loses no race and saves the most, then balanced, then latency', () => {
  const day = () => new EtsyGenerator({ requests: 30_000, days: 1, seed: 3 }).batches()
  const [latency, balanced, savings] = PREFERENCES.map((hedge) => replay({ hedge }, day()))
  assert.equal(savings.hedge.racesLost, 0)
  assert.ok(latency.hedge.racesLost > 0 && balanced.hedge.racesLost > 0)
  assert.ok(savings.peerBytes > balanced.peerBytes, `savings ${savings.peerBytes} B from peers, balanced ${balanced.peerBytes}`)
  assert.ok(balanced.peerBytes > latency.peerBytes, `balanced ${balanced.peerBytes} B from peers, latency ${latency.peerBytes}`)
  assert.ok(savings.savings > balanced.savings && balanced.savings > latency.savings)
})
