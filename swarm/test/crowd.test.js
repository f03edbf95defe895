/**
 * The crowd's short form: five minutes of the NASA July log replayed through
 * the real system (coordinator, the replay origin at +80 ms / 5 Mbit/s, the
 * two busiest clients in Chromium and Firefox, the rest as Node peers running
 * the client, 10% of them behind NATs nobody reaches), and the simulator on
 * the same slice; and three minutes of it on three coordinators over a Redis
 * Cluster. Each run has a process of its own, run again if the Node peers'
 * WebRTC stack crashes it (crowd-process.js). The full runs are a benchmark
 * (`npm run swarm`, docs/swarm.md).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readSlice } from '../src/slice.js'
import { runCrowdApart } from '../src/crowd-process.js'
import { bind, crowdFigures, simFigures } from '../src/figures.js'
import { SWARM_DEFAULTS, main, simSettings } from '../src/cli.js'

const NASA = fileURLToPath(new URL('../../../shared/traces/nasa_19950701_first10k.log.gz', import.meta.url))
const CRASHING = fileURLToPath(new URL('./fixtures/crashing-crowd.js', import.meta.url))
const skip = existsSync(NASA) ? false : `${NASA} is absent (the shared traces sit beside the repository)`
const BROWSERS = existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium') && existsSync(process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr') ? 2 : 0

test('a slice of a real log through the real system: savings by the origin\'s counter, as the simulator predicts, the dashboard true, nobody quarantined for another\'s NAT', { skip }, async () => {
  const slice = await readSlice(NASA, { from: 600, duration: 300 })
  // A third of the visitors behind NATs nobody reaches: enough failed set-ups in five minutes of log that
  // some outlast a page's pass-over and are reported (most end with their page, their loads done elsewhere).
  const settings = { ...SWARM_DEFAULTS, duration: 300, from: 600, untraversable: 0.3 }
  const run = await runCrowdApart({ slice, speedup: settings.speedup, rttMs: settings.rttMs, mbps: settings.mbps, untraversable: settings.untraversable, seed: settings.seed, browsers: BROWSERS })
  const crowd = crowdFigures(slice, run)
  assert.equal(crowd.failed, 0, 'no load failed')
  assert.equal(run.visitors, slice.clients.size)
  assert.ok(crowd.peerShare > 0 && crowd.savings > 0, JSON.stringify(crowd))
  assert.ok(run.origin.byKind.asset.bytes > 0, 'first views come from the origin')

  const sim = await simFigures(slice, simSettings(settings))
  assert.equal(sim.countedBytes, crowd.countedBytes, 'the simulator replays the bytes the crowd does')
  const check = bind([crowd], sim)
  for (const row of check.rows) assert.ok(row.within, `${row.figure}: crowd ${row.crowd.toFixed(2)}, simulator ${row.sim.toFixed(2)}`)

  // The coordinator's figures, from the visitors' own reports, against the origin's counter.
  assert.ok(Math.abs(crowd.dashboard.share - crowd.dashboard.truth) <= 0.03, JSON.stringify(crowd.dashboard))

  assert.ok(run.untraversable.length > 0, 'some visitors are behind NATs nobody reaches')
  assert.ok(run.coordinator.reports_no_channel + run.coordinator.reports_stall > 0, 'their failures were reported')
  assert.equal(run.coordinator.quarantines, 0, 'and quarantined nobody')
})

test('three coordinators on a Redis Cluster: visitors of different shards share, and the simulator still predicts it', { skip }, async () => {
  const slice = await readSlice(NASA, { from: 600, duration: 180 })
  const settings = { ...SWARM_DEFAULTS, untraversable: 0 }
  const run = await runCrowdApart({ slice, speedup: settings.speedup, rttMs: settings.rttMs, mbps: settings.mbps, untraversable: 0, store: 'cluster', shards: 3 })
  const crowd = crowdFigures(slice, run)
  assert.equal(crowd.failed, 0, 'no load failed')
  assert.ok(crowd.peerShare > 0, JSON.stringify(crowd))
  const sim = await simFigures(slice, simSettings(settings))
  for (const row of bind([crowd], sim).rows) assert.ok(row.within, `${row.figure}: crowd ${row.crowd.toFixed(2)}, simulator ${row.sim.toFixed(2)}`)
})

test('a crowd run whose process crashes is run again, and what it started goes with it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'maygh-crash-'))
  try {
    const lines = []
    const run = await runCrowdApart(/** @type {any} */ ({ dir, log: (/** @type {string} */ l) => lines.push(l) }), { child: CRASHING })
    assert.deepEqual(run.crashes, ['SIGSEGV'])
    assert.equal(run.visitors, 2, 'the second attempt\'s result')
    assert.match(lines.join('\n'), /crashed \(SIGSEGV/)
    const orphan = Number(readFileSync(join(dir, 'grandchild'), 'utf8'))
    // gone, or a zombie nobody has reaped yet
    const state = existsSync(`/proc/${orphan}/stat`) ? readFileSync(`/proc/${orphan}/stat`, 'utf8').split(') ')[1][0] : 'gone'
    assert.ok(state === 'gone' || state === 'Z', `the crashed run's own child was killed with it (state ${state})`)
    await assert.rejects(runCrowdApart(/** @type {any} */ ({ dir, always: true }), { child: CRASHING, attempts: 2 }), { code: 'MGH_SWARM_ERR_CRASHED' })
    await assert.rejects(runCrowdApart(/** @type {any} */ ({ dir, fail: true }), { child: CRASHING }), /a run's own error/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('maygh-swarm: coded errors for bad flags and unreadable logs, help', async () => {
  /** @param {string[]} argv */
  const cli = async (argv) => {
    const out = []
    const err = []
    const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) })
    return { code, out: out.join('\n'), err: err.join('\n') }
  }
  const help = await cli(['--help'])
  assert.equal(help.code, 0)
  for (const flag of ['--trace', '--speedup', '--untraversable', '--browsers', '--repeat']) assert.match(help.out, new RegExp(flag))
  const unknown = await cli(['--nope'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.err, /^maygh-swarm: MGH_SIM_ERR_BAD_FLAG: .*'--nope'/)
  assert.match((await cli([])).err, /^maygh-swarm: MGH_SIM_ERR_NO_INPUT: /)
  for (const bad of [['--speedup', '0'], ['--untraversable', '2'], ['--repeat', '1.5'], ['--browsers', 'x']]) {
    const r = await cli(['--trace', NASA, ...bad])
    assert.equal(r.code, 2)
    assert.match(r.err, new RegExp(`^maygh-swarm: MGH_SIM_ERR_BAD_VALUE: .*${bad[0]} `))
  }
  assert.match((await cli(['--trace', '/nonexistent/log.gz'])).err, /^maygh-swarm: MGH_SIM_ERR_TRACE_OPEN: /)
  if (!skip) assert.match((await cli(['--trace', NASA, '--from', '1e9'])).err, /^maygh-swarm: MGH_SIM_ERR_EMPTY: /)
})
