#!/usr/bin/env node
/**
 * `npm test`: builds the client bundle, then runs every suite (unit, store
 * contract on memory and on real Redis, simulator, demo site, and the browser
 * end-to-end tests) in ONE `node --test` run, so CI reads one summary.
 *
 * The run happens inside a private network namespace that has only loopback
 * (`unshare -n`), so servers, Redis, STUN and browsers cannot reach or be
 * reached from anything else. Without root (a developer's laptop), it runs in
 * the normal namespace and says so.
 *
 * First it installs the Debian packages the suites need when the machine
 * lacks them (scripts/install-system-deps.sh: browsers, redis-server; needs
 * root, as on CI); `MAYGH_TEST_NO_INSTALL=1` skips that step.
 *
 * Beside the build, two static checks run as steps of their own: the type
 * check (`tsc -p jsconfig.json`: JSDoc types, checkJs with strict null checks)
 * and the lint (`eslint .`, neostandard). Each counts as one check in the
 * closing `N passed, N failed` line, and a failure fails `npm test`.
 *
 * `npm test -- FILE…` runs just those files (and skips the static checks).
 */
import { spawnSync, spawn } from 'node:child_process'
import { readdirSync, existsSync, readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildClient } from '../client/build.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const SUITES = ['protocol/test', 'policy/test', 'coordinator/test', 'client/test', 'demo-site/test', 'sim/test', 'swarm/test', 'bench/test', 'test/e2e']

/** @returns {string[]} every *.test.js under the suite folders, e2e last */
function testFiles () {
  return SUITES.flatMap((dir) => {
    const abs = join(root, dir)
    if (!existsSync(abs)) return []
    return readdirSync(abs, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.test.js'))
      .sort()
      .map((f) => relative(root, join(abs, f)))
  })
}

/** @returns {boolean} whether we may make a loopback-only network namespace */
function canIsolate () {
  if (process.env.MAYGH_TEST_NO_NETNS === '1') return false
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' })
  return probe.status === 0
}

if (process.env.MAYGH_TEST_NO_INSTALL !== '1') {
  const install = spawnSync('bash', [join(root, 'scripts/install-system-deps.sh')], { stdio: 'inherit' })
  if (install.status !== 0) console.log('some system packages are missing: the tests that need them will fail (see above)')
}

/**
 * Run one static check to completion, its output shown as it ends.
 * @param {string} name
 * @param {string} script a bin under node_modules, run with this node
 * @param {string[]} args
 * @returns {Promise<boolean>} whether it passed
 */
function staticCheck (name, script, args) {
  const child = spawn(process.execPath, [join(root, 'node_modules', script), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  return new Promise((resolve) => {
    child.on('error', (err) => { output += String(err) })
    child.on('close', (code) => {
      console.log(code === 0 ? `${name}: ok` : `${name}: FAILED\n${output.trim()}`)
      resolve(code === 0)
    })
  })
}

const explicitFiles = process.argv.length > 2
const checks = explicitFiles
  ? Promise.resolve([])
  : Promise.all([
    staticCheck('types (tsc -p jsconfig.json)', 'typescript/bin/tsc', ['-p', 'jsconfig.json']),
    staticCheck('lint (eslint .)', 'eslint/bin/eslint.js', ['.'])
  ])
for (const b of (await buildClient()).bundles) console.log(`client bundle ${b.file}: ${b.bytes} B, ${b.gzipBytes} B gzip, ${b.brotliBytes} B brotli`)
const checked = await checks

const files = explicitFiles ? process.argv.slice(2) : testFiles()
// spec for people, TAP to a file for the closing `N passed, N failed` line.
const tapDir = mkdtempSync(join(tmpdir(), 'maygh-test-'))
const tapFile = join(tapDir, 'results.tap')
const nodeArgs = ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tapFile}`, ...files]
let command = process.execPath
let args = nodeArgs
if (canIsolate()) {
  command = 'unshare'
  args = ['-n', 'sh', '-c', 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"', 'sh', process.execPath, ...nodeArgs]
  console.log(`running ${files.length} test files in a loopback-only network namespace`)
} else {
  console.log(`running ${files.length} test files (no network namespace: needs root and unshare)`)
}
const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, MAYGH_TEST: '1' } })
child.on('exit', (code, signal) => {
  const tap = existsSync(tapFile) ? readFileSync(tapFile, 'utf8') : ''
  const count = (/** @type {string} */ key) => Number(tap.match(new RegExp(`^# ${key} (\\d+)$`, 'm'))?.[1] ?? 0)
  rmSync(tapDir, { recursive: true, force: true })
  const checksFailed = checked.filter((ok) => !ok).length
  const failed = count('fail') + count('cancelled') + checksFailed
  const passed = count('pass') + checked.length - checksFailed
  if (checksFailed > 0) console.log(`\n${checksFailed} static check(s) failed (see the start of the output)`)
  console.log(`\n${passed} passed, ${failed} failed, ${count('skipped')} skipped`)
  process.exit(checksFailed > 0 ? 1 : code ?? (signal ? 1 : 0))
})
