/**
 * The command line: `maygh-sim --trace FILE …` or `maygh-sim --synthetic etsy …`.
 * Flags are parsed here and nowhere else; bad flags and inputs print
 * `maygh-sim: CODE: message` on stderr and exit with status 2. `--json` prints
 * exactly one JSON object on stdout; progress and notes go to stderr.
 */
import { tmpdir } from 'node:os'
import { parseArgs } from 'node:util'
import { GENERATOR_BYTE_PARAMS, INPUT_DEFAULTS, SIM_DEFAULTS, SIM_OPTION_SPECS, TEXT_KINDS, parseNumber, resolveConfig } from './config.js'
import { ERRORS, MayghError, commandError, readArgs } from '../../protocol/index.js'
import { formatBinaryBytes, formatCount, formatSize } from './report/format.js'
import { ProgressBar } from './report/progress.js'
import { writeReport } from './report/report-html.js'
import { toReport } from './run/run.js'
import { DEFAULT_PARALLEL, runJobs } from './run/run-pool.js'
import { parseSweep, sweepJobs, sweepTable, valueLabel } from './run/sweep.js'
import { ETSY_DEFAULTS } from './synthetic/etsy-params.js'
import { SORT_BYTES_PER_REQUEST } from './input/sort-requests.js'
import { countedAndLeftOut } from './input/static-assets.js'
import { summaryText } from './report/summary-text.js'

/**
 * @param {string} key camelCase
 * @returns {string} kebab-case
 */
const kebab = (key) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** generator parameters settable by flag (the seed is the model's --seed) */
const GENERATOR_FLAGS = Object.keys(ETSY_DEFAULTS).filter((k) => k !== 'seed').map((key) => ({ key, flag: kebab(key) }))

/** Flags besides the model's and the generator's, with their help text. */
const GENERAL = /** @type {const} */ ([
  ['trace', 'FILE', 'access log to replay: CLF/Combined, EPA or CSV; plain, .gz or .zip'],
  ['format', 'auto', 'trace format: auto, clf, epa or csv'],
  ['order-tolerance', String(INPUT_DEFAULTS.orderTolerance), 'seconds a trace may be out of time order (clamped, counted); beyond: an error'],
  ['sort', '', 'sort the trace by time first (stable; in memory, or on disk above --sort-memory)'],
  ['sort-memory', formatBinaryBytes(INPUT_DEFAULTS.sortMemoryBytes).replace(/ ([KMGT])iB/, (_, u) => u.toLowerCase()), `memory for --sort (about ${SORT_BYTES_PER_REQUEST} bytes a request); runs go to $TMPDIR above it`],
  ['synthetic', 'etsy', 'generate an Etsy-like trace instead of reading one'],
  ['json', '', 'print one JSON object on stdout instead of the summary'],
  ['report', 'FILE', 'also write an HTML report (tables and charts; opens offline)'],
  ['sweep', 'NAME=V1,V2,…', 'replay once per value of a model option and tabulate savings (repeatable)'],
  ['jobs', String(DEFAULT_PARALLEL), 'runs (main and sweep values) replayed at once, each on a core of its own'],
  ['no-progress', '', 'never draw the progress bar'],
  ['help', '', 'print this help and exit']
])

const MODEL_HELP = /** @type {Record<string, string>} */ ({
  adoption: 'fraction of clients running Maygh',
  pluginAdoption: 'adoption of the plug-in baseline replayed beside the run (0 = skip)',
  quotaBytes: "each browser's store quota, bytes (k/m/g suffixes)",
  linger: 'seconds a client stays online after its session\'s last request',
  sessionGap: 'a longer pause (seconds) between a client\'s requests ends its session',
  failRate: 'probability a new connection between traversable clients fails anyway',
  setupTime: 'seconds to open a peer connection (the holder must stay online)',
  untraversable: 'share of clients no peer connection reaches (NATs without a relay)',
  receiveOnly: 'share of clients that fetch from peers but never serve',
  firstPage: "a visitor's first page view: origin (not yet under the service worker) or peers",
  media: 'audio and video: peers (like any asset) or origin (never stored: the client before issue 26)',
  channels: 'peer records and channels live for a page view (page) or a session',
  hedge: 'the client\'s hedge rule under this site preference (balanced, latency, savings), or instant peer transfers (off)',
  viewportAssets: 'asset requests of a page view taken to be in its first viewport',
  lookupTime: 'seconds to the coordinator\'s holders reply',
  originTtfb: 'seconds to the origin\'s first byte',
  originRate: 'origin transfer speed, bytes/s (k/m suffixes)',
  peerRate: 'peer transfer speed, bytes/s (k/m suffixes)',
  uploadSession: 'bytes a client serves per session before it stops (inf = no budget)',
  uploadDay: 'bytes a client serves per UTC day before it stops (inf = no budget)',
  reportRule: 'reports that count toward quarantine: blaming (the coordinator\'s rule) or all',
  reportThreshold: 'distinct reporters that quarantine a visitor',
  reportWindow: 'seconds reports count for',
  quarantine: 'seconds a quarantine lasts',
  uploadRate: 'upload cap per client, bytes/s (inf = none)',
  uploadBurst: 'upload burst per client above the rate, bytes',
  maxHolders: 'holders a lookup returns',
  candidateSample: 'holders sampled per lookup before ranking',
  assets: 'what peers may serve: static (images, CSS, JS, fonts, media), all (every successful GET) or a URL regex',
  seed: 'seed of all random choices'
})

const GENERATOR_HELP = /** @type {Record<string, string>} */ ({
  days: 'days of trace',
  requests: 'expected asset requests over all days (page requests come on top)',
  start: 'first second of the trace, Unix time',
  utcOffset: 'hours from UTC of the audience\'s clock, for the cycles (negative west of Greenwich)',
  alpha: 'Zipf exponent of catalog popularity',
  catalogPerRequest: 'catalog objects per expected request',
  oneTimeShare: 'share of requests for a photo nobody asks for again',
  siteAssets: 'site-wide assets: the page templates\' CSS and JS bundles',
  siteAssetsPerLoad: 'site-wide assets a cold page load fetches',
  siteAssetRefetch: 'probability a returning visitor\'s HTTP cache has lost them',
  sizeMedian: 'median photo size, bytes (lognormal body)',
  sizeSigma: 'sigma of log(size)',
  tailShare: 'share of objects in the Pareto tail',
  tailAlpha: 'Pareto shape of the tail',
  tailMin: 'smallest tail object, bytes',
  sizeMax: 'largest object, bytes',
  siteAssetMedian: 'median size of a site-wide asset, bytes',
  sessionMin: 'fewest requests in a session',
  sessionMax: 'most requests in a session',
  pageAssetsMin: 'fewest assets a page view asks the origin for',
  pageAssetsMax: 'most assets a page view asks the origin for',
  pageBytes: 'bytes of each page request (0: the pages came from another host)',
  assetGapMedian: 'median seconds from a page request to its first asset, and between its assets',
  pageGapMedian: 'median seconds from a page view\'s last asset to the next page request',
  gapSigma: 'sigma of log(gap), both gaps',
  returnShare: 'share of sessions by returning visitors',
  heavyClients: 'heavy clients (crawlers, sellers watching their shops, office proxies)',
  heavyShare: 'share of sessions that are the heavy clients\'',
  heavyFactor: 'a heavy client\'s sessions are this many times longer',
  dailyAmplitude: 'daily cycle: rate ∝ 1 + a·cos(2π(hour − peak hour)/24)',
  peakHour: 'hour of the daily peak, audience\'s clock',
  weeklyAmplitude: 'weekly cycle: rate ∝ 1 + a·cos(2π(day − peak day)/7)',
  peakDay: 'day of the weekly peak (0 = Sunday)'
})

/** Every flag, as parseArgs takes it: the general ones, the model's, the generator's. */
export const SIM_FLAGS = Object.freeze(/** @type {Record<string, import('../../protocol/cli-args.js').FlagSpec>} */ ({
  ...Object.fromEntries(GENERAL.map(([flag, arg]) => [flag, { type: arg === '' ? 'boolean' : 'string', ...(flag === 'sweep' ? { multiple: true } : {}) }])),
  ...Object.fromEntries(Object.values(SIM_OPTION_SPECS).map((spec) => [spec.flag, { type: 'string' }])),
  ...Object.fromEntries(GENERATOR_FLAGS.map(({ flag }) => [flag, { type: 'string' }]))
}))

/**
 * @returns {string} the --help text
 * @throws {TypeError} when a model option or generator parameter has no help (a test calls it)
 */
export function helpText () {
  const lacking = [
    ...Object.keys(SIM_OPTION_SPECS).filter((key) => !MODEL_HELP[key]),
    ...GENERATOR_FLAGS.filter(({ key }) => !GENERATOR_HELP[key]).map(({ key }) => key)
  ]
  if (lacking.length > 0) throw new TypeError(`no help for ${lacking.join(', ')}`)
  const rows = [
    ...GENERAL.map(([flag, arg, text]) => [`--${flag}${arg ? ` ${arg}` : ''}`, text]),
    ['', ''],
    ['model options', '(default)'],
    ...Object.entries(SIM_OPTION_SPECS).map(([key, spec]) => [`--${spec.flag}`, `${MODEL_HELP[key]} (${showDefault(/** @type {any} */ (SIM_DEFAULTS)[key], spec.kind)})`]),
    ['', ''],
    ['generator (--synthetic etsy)', '(default; docs/simulator.md says why each)'],
    ...GENERATOR_FLAGS.map(({ key, flag }) => [`--${flag}`, `${GENERATOR_HELP[key]} (${showDefault(/** @type {any} */ (ETSY_DEFAULTS)[key], GENERATOR_BYTE_PARAMS.includes(key) ? 'bytes' : 'number')})`])
  ]
  const width = Math.max(...rows.map((r) => r[0].length))
  return [
    'usage: maygh-sim --trace FILE [--format clf|epa|csv] [options]',
    '       maygh-sim --synthetic etsy [--days 7] [--requests N] [--seed N] [options]',
    '',
    'Replays an access log (or an Etsy-like week) through the Maygh model and',
    'reports the share of bytes visitors\' browsers would have served each other',
    '(docs/simulator.md).',
    '',
    'A flag\'s value is the next argument or follows "=" (--linger=60); a negative',
    'number may be the next argument (--utc-offset -8), any other value that starts',
    'with "-" takes "=". Numbers take exponents (2e7); sizes and rates binary',
    'suffixes (50m = 50 MiB); budgets and rates inf.',
    '',
    ...rows.map(([a, b]) => (a ? `  ${a.padEnd(width)}  ${b}` : '')),
    '',
    'Bad flags and inputs print "maygh-sim: CODE: message" on stderr and exit with',
    'status 2 (codes: docs/simulator.md, "Error codes").',
    ''
  ].join('\n')
}

/**
 * A default as people read it: sizes in binary units (`50 MiB`, as `50m` is typed), `inf`.
 * @param {unknown} v
 * @param {string} kind the option's kind (config.js)
 * @returns {string}
 */
function showDefault (v, kind) {
  if (typeof v === 'number' && kind === 'bytes') return formatSize(v)
  if (typeof v === 'number' && (kind === 'rate' || kind === 'speed' || kind === 'budget')) return valueLabel({ kind }, v)
  return v === '' ? "''" : v === Infinity ? 'inf' : String(v)
}

/**
 * Parses argv into a source, a config and output options. Throws MayghError.
 * @param {string[]} argv
 */
export function parseCli (argv) {
  const { tokens } = parseArgs({ args: argv, options: SIM_FLAGS, strict: false, allowPositionals: true, tokens: true })
  const { values } = readArgs(/** @type {import('../../protocol/cli-args.js').ArgToken[]} */ (tokens), SIM_FLAGS, { code: ERRORS.MGH_SIM_ERR_BAD_FLAG })
  const v = /** @type {Record<string, any>} */ (values)
  if (v.help) return { help: true }
  if ((v.trace === undefined) === (v.synthetic === undefined)) throw new MayghError(ERRORS.MGH_SIM_ERR_NO_INPUT, v.trace !== undefined ? 'both given' : undefined)
  if (v.synthetic !== undefined && v.synthetic !== 'etsy') throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--synthetic ${v.synthetic}: only "etsy" exists`)
  if (v.format !== undefined && !['auto', 'clf', 'epa', 'csv'].includes(v.format)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--format ${v.format} is not one of auto, clf, epa, csv`)
  if (v.trace === '' || v.report === '') throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, 'an empty file name')
  /** @type {Record<string, unknown>} */
  const overrides = {}
  for (const [key, spec] of Object.entries(SIM_OPTION_SPECS)) {
    const text = v[spec.flag]
    if (text === undefined) continue
    overrides[key] = TEXT_KINDS.includes(spec.kind) ? text : parseNumber(spec.flag, text, spec.kind)
  }
  const config = resolveConfig(overrides)
  /** @type {Record<string, number>} */
  const generator = {}
  for (const { key, flag } of GENERATOR_FLAGS) {
    if (v[flag] === undefined) continue
    if (v.synthetic === undefined) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_FLAG, `--${flag} applies only with --synthetic`)
    generator[key] = parseNumber(flag, v[flag], GENERATOR_BYTE_PARAMS.includes(key) ? 'bytes' : 'number')
  }
  /** @type {import('./input/input.js').SourceSpec} */
  const source = v.trace !== undefined
    ? { trace: /** @type {string} */ (v.trace), format: v.format ?? 'auto', ...orderOptions(v) }
    : { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { ...generator, seed: config.seed } }
  if (v.synthetic !== undefined) {
    const flag = ['sort', 'order-tolerance', 'sort-memory'].find((f) => v[f] !== undefined)
    if (flag) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_FLAG, `--${flag} applies only with --trace (the generator writes in time order)`)
  }
  const sweeps = (v.sweep ?? []).map(parseSweep)
  const jobs = v.jobs === undefined ? DEFAULT_PARALLEL : parseNumber('jobs', v.jobs, 'count')
  if (!(Number.isInteger(jobs) && jobs >= 1 && jobs <= 256)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--jobs ${v.jobs} must be an integer from 1 to 256`)
  return { help: false, source, config, sweeps, jobs, json: v.json === true, report: v.report, progress: v['no-progress'] !== true }
}

/**
 * The trace's time-order flags: --sort, or how far out of order it may be.
 * @param {Record<string, any>} v parsed flags
 * @returns {{ sort: boolean, orderTolerance: number, sortMemoryBytes: number }}
 */
function orderOptions (v) {
  const sort = v.sort === true
  if (sort && v['order-tolerance'] !== undefined) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_FLAG, '--order-tolerance does not apply with --sort (a sorted trace is in order)')
  if (!sort && v['sort-memory'] !== undefined) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_FLAG, '--sort-memory applies only with --sort')
  const orderTolerance = v['order-tolerance'] === undefined ? INPUT_DEFAULTS.orderTolerance : parseNumber('order-tolerance', v['order-tolerance'], 'seconds')
  if (!(orderTolerance >= 0 && Number.isFinite(orderTolerance))) {
    throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--order-tolerance ${v['order-tolerance']} must be a finite number of seconds ≥ 0 (to accept any order, use --sort)`)
  }
  const sortMemoryBytes = v['sort-memory'] === undefined ? INPUT_DEFAULTS.sortMemoryBytes : parseNumber('sort-memory', v['sort-memory'], 'bytes')
  if (!(sortMemoryBytes >= 32 * 1024 && Number.isFinite(sortMemoryBytes))) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--sort-memory ${v['sort-memory']} must be at least 32k`)
  return { sort, orderTolerance, sortMemoryBytes }
}

/**
 * JSON with Infinity spelled out (JSON has no number for it).
 * @param {unknown} value
 * @returns {string}
 */
export function toJson (value) {
  return JSON.stringify(value, (_k, v) => (v === Infinity ? 'Infinity' : v))
}

/**
 * Runs the CLI.
 * @param {string[]} argv arguments after the program name
 * @param {{ stdout?: NodeJS.WritableStream, stderr?: NodeJS.WriteStream }} [io]
 * @returns {Promise<number>} exit status
 */
export async function main (argv, io = {}) {
  const stdout = io.stdout ?? process.stdout
  const stderr = io.stderr ?? process.stderr
  /** @type {ProgressBar | null} */
  let bar = null
  try {
    const cli = parseCli(argv)
    if (cli.help) {
      stdout.write(helpText())
      return 0
    }
    const { source, config, sweeps, jobs } = /** @type {Required<typeof cli>} */ (cli)
    if (source.sort) {
      const memory = source.sortMemoryBytes ?? INPUT_DEFAULTS.sortMemoryBytes
      stderr.write(`maygh-sim: --sort: sorting the trace by time, in memory up to ${formatBinaryBytes(memory)} ` +
        `(about ${formatCount(memory / SORT_BYTES_PER_REQUEST)} requests), on disk in ${tmpdir()} above\n`)
    }
    bar = new ProgressBar(stderr, { enabled: cli.progress })
    const sweepRuns = sweeps.map((spec) => sweepJobs(source, config, spec))
    const runs = 1 + sweepRuns.reduce((n, r) => n + r.length, 0)
    const active = bar
    const results = await runJobs([{ source, config }, ...sweepRuns.flat()], {
      parallel: jobs,
      onProgress: (fraction, requests, finished) => {
        if (runs > 1) active.label = `${finished}/${runs} runs done`
        active.update(fraction, requests)
      }
    })
    let at = 1
    const sweepResults = sweeps.map((spec, i) => sweepTable(spec, results.slice(at, (at += sweepRuns[i].length))))
    const run = results[0]
    bar.done()
    const report = toReport(run, config, sweepResults)
    Object.assign(report, countedAndLeftOut(report))
    const sorted = report.input.sorted
    if (sorted) stderr.write(`maygh-sim: input sorted: ${formatCount(sorted.moved)} of ${formatCount(sorted.requests)} requests moved (${sorted.onDisk ? `on disk, ${sorted.runs} runs merged` : 'in memory'})\n`)
    if (cli.report) await writeReport(cli.report, report)
    if (cli.json) stdout.write(toJson(report) + '\n')
    else stdout.write(summaryText(report))
    if (cli.report && !cli.json) stderr.write(`report written to ${cli.report}\n`)
    return 0
  } catch (err) {
    bar?.done()
    const { line, exit } = commandError('maygh-sim', err)
    stderr.write(`${line}\n`)
    return exit
  }
}
