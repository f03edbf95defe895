// The command line as a user runs it: exit codes, one JSON object on stdout, coded errors, the report.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SIM_OPTION_SPECS } from '../src/config.js'
import { ProgressBar } from '../src/report/progress.js'
import { ETSY_DEFAULTS } from '../src/synthetic/etsy-params.js'
import { SIM_FLAGS, helpText } from '../src/cli.js'
import { runCli } from './run-cli.js'

const EPA = fileURLToPath(new URL('../../../shared/traces/epa-http.zip', import.meta.url))
const skipTraces = existsSync(EPA) ? false : `shared traces not found at ${EPA}`
const SMALL = ['--synthetic', 'etsy', '--days', '1', '--requests', '20000']

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'maygh-sim-cli-')) })
after(async () => { await rm(dir, { recursive: true, force: true }) })

test('--json prints exactly one JSON object with the documented fields', async () => {
  const { code, stdout, stderr } = await runCli([...SMALL, '--json'])
  assert.equal(code, 0, stderr)
  assert.equal(stdout.trim().split('\n').length, 1)
  const r = JSON.parse(stdout)
  for (const key of ['requests', 'bytes', 'originBytes', 'peerBytes', 'cacheBytes', 'savings', 'oracleSavings', 'pluginSavings']) {
    assert.equal(typeof r[key], 'number', key)
  }
  assert.equal(r.originBytes + r.peerBytes + r.cacheBytes, r.bytes)
  assert.ok(r.oracleSavings >= r.savings)
  assert.equal(r.config.uploadRate, 'Infinity')
  assert.equal(r.hourly.hours, 24)
  assert.equal(stderr, '') // no progress bar: stderr is not a terminal
})

test('the human summary and a sweep table', async () => {
  const { code, stdout } = await runCli([...SMALL, '--sweep', 'linger=0,600', '--sweep', 'fail-rate=0,1', '--sweep', 'quota=5m,1.5k', '--sweep', 'upload-rate=1m,inf'])
  assert.equal(code, 0)
  // byte values read as the flags take them, not as raw numbers
  assert.match(stdout, /sweep of quota:\nquota +savings[^]*\n5 MiB +\d+\.\d%[^]*\n1\.5 KiB +\d+\.\d%/)
  assert.match(stdout, /\n1 MiB\/s +\d+\.\d%[^]*\ninf +\d+\.\d%/)
  assert.match(stdout, /savings \d+\.\d% \(peers/)
  assert.match(stdout, /sweep of linger:\nlinger +savings/)
  assert.match(stdout, /\n0 +\d+\.\d%/)
  assert.match(stdout, /\n600 +\d+\.\d%/)
  assert.match(stdout, /sweep of fail-rate:/)
})

test('--json with --sweep carries the rows; more linger saves at least as much', async () => {
  const { code, stdout } = await runCli([...SMALL, '--json', '--sweep', 'linger=0,600', '--plugin-adoption', '0'])
  assert.equal(code, 0)
  const r = JSON.parse(stdout)
  assert.equal(r.pluginSavings, 0)
  assert.equal(r.plugin, null)
  assert.equal(r.sweeps.length, 1)
  assert.equal(r.sweeps[0].param, 'linger')
  assert.deepEqual(r.sweeps[0].rows.map((/** @type {any} */ x) => x.value), [0, 600])
  assert.ok(r.sweeps[0].rows[1].oracleSavings >= r.sweeps[0].rows[0].oracleSavings)
})

test('the HTML report is self-contained: Chart.js inlined, no remote scripts', async () => {
  const path = join(dir, 'report.html')
  const { code, stderr } = await runCli([...SMALL, '--report', path, '--sweep', 'quota=1m,50m'])
  assert.equal(code, 0, stderr)
  const html = await readFile(path, 'utf8')
  assert.match(html, /^<!doctype html>/)
  assert.doesNotMatch(html, /<script[^>]+src=/i)
  assert.doesNotMatch(html, /<link[^>]+href=["']?https?:/i)
  assert.ok(html.length > 150_000, 'Chart.js is inlined')
  assert.match(html, /new Chart\(/)
  for (const id of ['bytes', 'savings', 'load', 'lorenz', 'sweep0']) assert.match(html, new RegExp(`<canvas id="${id}">`))
  // sizes as the flags read them, never raw byte counts; the bytes axis starts at zero
  assert.match(html, /<td>--quota<\/td><td>50 MiB<\/td>/)
  assert.match(html, /<td>--upload-burst<\/td><td>4 MiB<\/td>/)
  assert.match(html, /<td>--size-max<\/td><td>4 MiB<\/td>/)
  assert.doesNotMatch(html.slice(0, html.indexOf('<script>')), /52428800|4194304/)
  assert.match(html, /getElementById\('bytes'\)[^]*?y: \{ stacked: true, beginAtZero: true, min: 0/)
  assert.match(html, /Hours are shown in UTC-05:00: the generated audience&#39;s clock \(--utc-offset\)/)
})

test('a trace\'s report: human Input rows, the hours\' zone, what was counted, the sampling note', async () => {
  const log = join(dir, 'small.log')
  await writeFile(log, [
    '10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /index.html HTTP/1.0" 200 1000',
    '10.0.0.1 - - [10/Oct/2000:13:55:37 -0700] "GET /a.gif HTTP/1.0" 200 2000',
    '10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2000'
  ].join('\n'))
  const path = join(dir, 'trace-report.html')
  const { code, stderr } = await runCli(['--trace', log, '--report', path])
  assert.equal(code, 0, stderr)
  const html = await readFile(path, 'utf8')
  assert.doesNotMatch(html, /zipEntry|<td>null<\/td>|parsedRequests/)
  assert.match(html, /<td>requests parsed<\/td><td>3<\/td>/)
  assert.match(html, /<td>format<\/td><td>Common \/ Combined Log Format<\/td>/)
  assert.match(html, /Hours are shown in UTC-07:00: the log&#39;s own UTC offset, the same on every line/)
  assert.match(html, /<li>counted \(peers could serve them\): 2 requests, 4\.0 kB; rule: static assets/)
  assert.match(html, /<li>time order: 1 requests were behind the newest time/)
  assert.match(html, /<b>Sampled logs\.<\/b> A sampled log understates savings: .* from 62% to 45% and 32%/)
})

test('EPA log through the CLI', { skip: skipTraces }, async () => {
  const { code, stdout } = await runCli(['--trace', EPA, '--format', 'epa', '--json'])
  assert.equal(code, 0)
  const r = JSON.parse(stdout)
  assert.equal(r.requests, 47_748)
  assert.equal(r.clients, 2_333)
  assert.ok(r.savings > 0 && r.savings < 1)
  assert.ok(r.pluginSavings < r.savings)
  assert.equal(r.input.format, 'epa')
})

for (const [args, codeName] of /** @type {[string[], string][]} */ ([
  [['--bogus'], 'MGH_SIM_ERR_BAD_FLAG'],
  [[], 'MGH_SIM_ERR_NO_INPUT'],
  [['--trace', 'a.log', '--synthetic', 'etsy'], 'MGH_SIM_ERR_NO_INPUT'],
  [['--trace', '/nonexistent/access.log'], 'MGH_SIM_ERR_TRACE_OPEN'],
  [[...SMALL, '--adoption', '2'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--linger', 'soon'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--max-holders', '4', '--candidate-sample', '2'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--sweep', 'colour=1,2'], 'MGH_SIM_ERR_SWEEP'],
  [['--trace', '/nonexistent/access.log', '--sweep', 'linger=0,60', '--jobs', '2'], 'MGH_SIM_ERR_TRACE_OPEN'],
  [[...SMALL, '--jobs', '0'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--jobs', '1.5'], 'MGH_SIM_ERR_BAD_VALUE'],
  [['--trace', 'a.log', '--alpha', '1.2'], 'MGH_SIM_ERR_BAD_FLAG'],
  [['--synthetic', 'amazon'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--report', '/nonexistent-dir/r.html'], 'MGH_SIM_ERR_REPORT'],
  [[...SMALL, '--sort'], 'MGH_SIM_ERR_BAD_FLAG'],
  [[...SMALL, '--order-tolerance', '5'], 'MGH_SIM_ERR_BAD_FLAG'],
  [['--trace', 'a.log', '--sort', '--order-tolerance', '5'], 'MGH_SIM_ERR_BAD_FLAG'],
  [['--trace', 'a.log', '--sort-memory', '1m'], 'MGH_SIM_ERR_BAD_FLAG'],
  [['--trace', 'a.log', '--order-tolerance=-1'], 'MGH_SIM_ERR_BAD_VALUE'],
  [['--trace', 'a.log', '--order-tolerance', 'inf'], 'MGH_SIM_ERR_BAD_VALUE'],
  [['--trace', 'a.log', '--sort', '--sort-memory', '1k'], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--assets', ''], 'MGH_SIM_ERR_BAD_VALUE'],
  [[...SMALL, '--assets', '(['], 'MGH_SIM_ERR_BAD_VALUE']
])) {
  test(`${args.join(' ') || '(no arguments)'} → ${codeName}, exit 2, no stack trace`, async () => {
    const { code, stdout, stderr } = await runCli(args)
    assert.equal(code, 2)
    assert.equal(stdout, '')
    assert.match(stderr, new RegExp(`^maygh-sim: ${codeName}: `))
    assert.doesNotMatch(stderr, /\n\s+at /)
  })
}

test('bad flags, missing values and bad numbers name the flag as typed; negative numbers are taken as values', async () => {
  for (const [args, codeName, named] of /** @type {[string[], string, string][]} */ ([
    [['--bogus'], 'MGH_SIM_ERR_BAD_FLAG', '--bogus is not a flag'],
    [['-x', ...SMALL], 'MGH_SIM_ERR_BAD_FLAG', '-x is not a flag'],
    [['--trace'], 'MGH_SIM_ERR_BAD_FLAG', '--trace needs a value'],
    [['--trace', '--json'], 'MGH_SIM_ERR_BAD_FLAG', '--trace needs a value, got the flag --json'],
    [[...SMALL, '--json=yes'], 'MGH_SIM_ERR_BAD_FLAG', '--json takes no value'],
    [[...SMALL, 'extra'], 'MGH_SIM_ERR_BAD_FLAG', 'unexpected argument "extra"'],
    [[...SMALL, '--linger', 'soon'], 'MGH_SIM_ERR_BAD_VALUE', '--linger "soon" is not a number'],
    [[...SMALL, '--linger', '-5'], 'MGH_SIM_ERR_BAD_VALUE', '--linger -5 must be'],
    [[...SMALL, '--jobs', '-2'], 'MGH_SIM_ERR_BAD_VALUE', '--jobs -2 must be an integer from 1 to 256'],
    [['--trace', 'a.log', '--order-tolerance', '-1'], 'MGH_SIM_ERR_BAD_VALUE', '--order-tolerance -1 must be'],
    [['--synthetic', 'etsy', '--days', '-1'], 'MGH_SIM_ERR_BAD_VALUE', '--days'],
    // a negative value the generator documents is taken; what is refused here is the day count after it
    [['--synthetic', 'etsy', '--utc-offset', '-8', '--days', '0'], 'MGH_SIM_ERR_BAD_VALUE', '--days']
  ])) {
    const { code, stdout, stderr } = await runCli(args)
    assert.equal(code, 2, stderr)
    assert.equal(stdout, '')
    assert.ok(stderr.startsWith(`maygh-sim: ${codeName}: `), stderr)
    assert.ok(stderr.includes(named), `${stderr} names ${named}`)
    assert.equal(stderr.trim().split('\n').length, 1, 'one line, no stack trace')
  }
  const { code, stdout } = await runCli([...SMALL, '--utc-offset', '-8', '--json'])
  assert.equal(code, 0)
  assert.equal(JSON.parse(stdout).requests > 0, true, '--utc-offset -8 runs')
})

test('--help explains every flag of its table', async () => {
  const { code, stdout } = await runCli(['--help'])
  assert.equal(code, 0)
  // each flag of the table the CLI parses with, with words after it (helpText refuses an option without help)
  for (const flag of Object.keys(SIM_FLAGS)) assert.match(stdout, new RegExp(`^ {2}--${flag}\\b.* {2}\\S.*\\w`, 'm'), `--${flag}`)
  assert.doesNotThrow(helpText)
  for (const flag of ['trace', 'format', 'order-tolerance', 'sort', 'sort-memory', 'synthetic', 'json', 'report', 'sweep', 'jobs', 'no-progress']) assert.match(stdout, new RegExp(`--${flag}\\b`))
  assert.match(stdout, /--order-tolerance 10 /)
  assert.match(stdout, /--sort-memory 512m /)
  assert.match(stdout, /--assets +what peers may serve: static .* \(static\)/)
  for (const spec of Object.values(SIM_OPTION_SPECS)) assert.match(stdout, new RegExp(`--${spec.flag}\\b`))
  for (const key of Object.keys(ETSY_DEFAULTS)) {
    if (key === 'seed') continue
    assert.match(stdout, new RegExp(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}\\b`))
  }
})

test('the progress bar draws only on a terminal, and erases itself', () => {
  /** @type {string[]} */
  const written = []
  const tty = /** @type {any} */ ({ isTTY: true, columns: 100, write: (/** @type {string} */ s) => written.push(s) })
  const bar = new ProgressBar(tty, { delayMs: 0 })
  bar.update(0.5, 1_000_000)
  bar.draw()
  bar.done()
  assert.match(written[0], /^\r.*\[#+\.+\] {2}50% 1\.0M req/)
  assert.equal(written[1], '\r\x1b[K')
  const pipe = /** @type {any} */ ({ isTTY: false, write: (/** @type {string} */ s) => written.push(s) })
  const quiet = new ProgressBar(pipe, { delayMs: 0 })
  quiet.update(1, 5)
  quiet.done()
  assert.equal(written.length, 2)
})
