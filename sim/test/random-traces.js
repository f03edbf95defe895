// Random small traces and configs for the simulator's property tests (fast-check arbitraries),
// shared by the engine-against-reference test and the hedge preferences' test.
import fc from 'fast-check'
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_MEDIA, FLAG_PAGE, RequestBatch } from '../src/batch.js'

/** A fraction in [0, 1] in thousandths, now and then exactly 0 or 1. */
const fraction = fc.oneof(fc.constantFrom(0, 1), fc.integer({ min: 0, max: 1000 }).map((x) => x / 1000))
/** @param {fc.Arbitrary<number>} usual @param {fc.Arbitrary<number>} other @returns {fc.Arbitrary<number>} mostly `usual` */
const mostly = (usual, other) => fc.oneof({ arbitrary: usual, weight: 3 }, { arbitrary: other, weight: 2 })

/** Seconds in hundredths up to `max`, now and then exactly 0. */
const seconds = (/** @type {number} */ max) => fc.oneof(fc.constant(0), fc.integer({ min: 0, max: max * 100 }).map((x) => x / 100))
/** A byte budget: mostly none, else small enough that peers spend it. */
const budget = mostly(fc.constant(Infinity), fc.integer({ min: 0, max: 6000 }))

export const optionsArb = fc.record({
  quotaBytes: mostly(fc.constant(50 * 1024 * 1024), fc.integer({ min: 0, max: 8000 })),
  linger: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 9000 }).map((x) => x / 100)),
  sessionGap: fc.integer({ min: 1, max: 900 }),
  failRate: mostly(fc.constant(0), fraction),
  // mostly under the client's 1 s pass-over, now and then over it (every new connection then times out)
  setupTime: fc.oneof({ arbitrary: seconds(1), weight: 3 }, { arbitrary: seconds(30), weight: 1 }),
  untraversable: mostly(fc.constant(0.1), fraction),
  receiveOnly: mostly(fc.constant(0), fraction),
  firstPage: fc.constantFrom('origin', 'peers'),
  media: fc.constantFrom('origin', 'peers'),
  channels: fc.constantFrom('page', 'session'),
  hedge: fc.constantFrom('balanced', 'latency', 'savings', 'off'),
  // a page's first few loads in the viewport (the hedge rule's priority), mostly fewer than a page's assets
  viewportAssets: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 8 })),
  lookupTime: seconds(2),
  originTtfb: seconds(1),
  originRate: fc.oneof(fc.constant(Infinity), fc.integer({ min: 100, max: 1_000_000 }), fc.integer({ min: 100, max: 10_000 })),
  peerRate: fc.oneof(fc.constant(Infinity), fc.integer({ min: 100, max: 1_000_000 }), fc.integer({ min: 100, max: 10_000 })),
  uploadSession: budget,
  uploadDay: budget,
  reportRule: fc.constantFrom('blaming', 'all', 'all'),
  reportThreshold: fc.oneof(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 4 })),
  reportWindow: seconds(100),
  quarantine: seconds(200),
  uploadRate: mostly(fc.constant(Infinity), fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3000 }))),
  uploadBurst: fc.integer({ min: 0, max: 10_000 }),
  maxHolders: fc.integer({ min: 1, max: 4 }),
  extraSample: fc.integer({ min: 0, max: 3 }),
  adoption: mostly(fc.constant(1), fraction),
  pluginAdoption: fraction,
  seed: fc.integer({ min: -1e6, max: 1e6 })
})

/**
 * Options under which a page's loads race the origin over channels that open: the hedge on,
 * set-ups the client waits for, few connections failing, stores that keep what they fetch.
 */
export const racingArb = optionsArb.map((o) => ({
  ...o, hedge: o.hedge === 'off' ? 'balanced' : o.hedge, setupTime: Math.max(0.2, Math.min(o.setupTime, 1)), untraversable: o.untraversable / 10, failRate: o.failRate / 10, quotaBytes: 50 * 1024 * 1024, adoption: 1
})).chain((o) => fc.record({ originRate: fc.integer({ min: 100, max: 5000 }), peerRate: fc.integer({ min: 100, max: 5000 }) }).map((rates) => ({ ...o, ...rates })))

/**
 * Requests as [time step, client, object, bytes, kind], from a few clients sharing a few
 * objects, mostly seconds apart (sessions overlap, peers serve) with now and then a long gap;
 * kind: mostly assets (some render-blocking), some audio or video, some pages, some neither.
 */
const scatteredArb = fc.record({
  start: fc.integer({ min: 0, max: 2e9 }),
  clients: fc.integer({ min: 2, max: 12 }),
  objects: fc.integer({ min: 1, max: 15 }),
  requests: fc.array(fc.tuple(
    fc.oneof(
      // a page's assets, requested together
      { arbitrary: fc.constant(0), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 100 }).map((x) => x / 100), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 10 }), weight: 6 },
      { arbitrary: fc.integer({ min: 0, max: 4000 }).map((x) => x / 100), weight: 2 },
      { arbitrary: fc.integer({ min: -5, max: 4000 }), weight: 1 }
    ),
    fc.nat(),
    fc.nat(),
    fc.oneof({ arbitrary: fc.integer({ min: 1, max: 3000 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 20_000 }), weight: 1 }),
    fc.oneof(
      { arbitrary: fc.constant(FLAG_ASSET), weight: 10 },
      { arbitrary: fc.constant(FLAG_ASSET | FLAG_BLOCKING), weight: 2 },
      { arbitrary: fc.constant(FLAG_ASSET | FLAG_MEDIA), weight: 1 },
      { arbitrary: fc.constant(FLAG_PAGE), weight: 3 },
      { arbitrary: fc.constant(0), weight: 1 }
    ),
    // day boundaries (the daily upload budget) now and then
    fc.oneof({ arbitrary: fc.constant(0), weight: 20 }, { arbitrary: fc.constant(86_400), weight: 1 })
  ), { maxLength: 200, size: 'max' })
})

/**
 * The same shape as page views: a page request, then a few assets requested together (within
 * half a second), by a few clients over a few objects, so that a page's loads meet the channels
 * and set-ups its earlier loads opened.
 */
const pagedArb = fc.record({
  start: fc.integer({ min: 0, max: 2e9 }),
  clients: fc.integer({ min: 2, max: 6 }),
  objects: fc.integer({ min: 1, max: 6 }),
  requests: fc.array(fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 60 })),
    fc.nat(),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3000 }), fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }).map((x) => x / 100)), fc.boolean()), { minLength: 1, maxLength: 5 })
  ), { maxLength: 40 }).map((views) => views.flatMap(([gap, client, assets]) => [
    [gap, client, 0, 0, FLAG_PAGE, 0],
    // a third of the objects are styles or scripts (render-blocking), in every request for them
    ...assets.map(([object, bytes, dt]) => [dt, client, object, bytes, object % 3 === 1 ? FLAG_ASSET | FLAG_BLOCKING : FLAG_ASSET, 0])
  ]))
})

/** Requests as [time step, client, object, bytes, flags, extra days] (the step and the days add up). */
export const traceArb = fc.oneof(scatteredArb, pagedArb)

/**
 * One batch of a generated trace's requests, at their times, clients and objects wrapped into range.
 * @param {{ start: number, clients: number, objects: number, requests: number[][] }} trace
 * @returns {RequestBatch}
 */
export function traceBatch (trace) {
  const batch = new RequestBatch()
  let t = trace.start
  for (const [dt, client, object, bytes, flags, day] of trace.requests) {
    t += dt + day
    batch.push(t, client % trace.clients, object % trace.objects, bytes, flags)
  }
  return batch
}
