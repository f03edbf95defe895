// --help and README.md "Configuration" against the coordinator's own tables:
// every option, flag, env var and default, both ways.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import * as config from '../src/config.js'
import { OPTIONS } from '../src/cli-options.js'
import { helpText, wantsHelp } from '../src/help.js'

const { DEFAULTS } = config
/** @type {Readonly<Record<string, string>> | undefined} */
const DESCRIPTIONS = /** @type {any} */ (config).DESCRIPTIONS
/** option → [flag, env var], for the options that have them */
const flagOf = new Map(Object.entries(OPTIONS).map(([flag, [option, envVar]]) => [option, { flag, envVar }]))

/**
 * The rows of the first table under "## Configuration".
 * @returns {Promise<{ options: string[], flags: string[], envs: string[], defaults: string[] }[]>}
 */
async function readmeRows () {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
  const section = readme.split(/^## /m).find((s) => s.startsWith('Configuration'))
  assert.ok(section, 'README.md has no "## Configuration" section')
  const lines = section.split('\n').map((l) => l.trim())
  const start = lines.findIndex((l) => l.startsWith('|'))
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'))
  const table = lines.slice(start, end === -1 ? undefined : end)
  const header = table[0].split('|').map((c) => c.trim())
  assert.deepEqual(header.slice(1, 5), ['option', 'flag', 'env', 'default'], 'the first table of "Configuration" starts | option | flag | env | default |')
  const rows = []
  for (const line of table.slice(2)) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim())
    rows.push({
      options: cells[0].split('/').map((s) => s.trim()),
      flags: [...cells[1].matchAll(/`--([a-z0-9-]+)`/g)].map((m) => m[1]),
      envs: [...cells[2].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]),
      defaults: cells[3].split('/').map((s) => s.trim())
    })
  }
  return rows
}

test('config.js describes every option, and --help shows each with its flag, env var and default', () => {
  assert.ok(DESCRIPTIONS, 'config.js must export DESCRIPTIONS: option → one-line meaning (help.js prints them)')
  const text = helpText(DESCRIPTIONS)
  const flat = text.replace(/\s+/g, ' ')
  for (const [option, value] of Object.entries(DEFAULTS)) {
    assert.ok(flat.includes(DESCRIPTIONS[option]), `--help lacks the description of ${option}`)
    if (value !== null) assert.ok(flat.includes(`default ${typeof value === 'object' ? JSON.stringify(value) : value})`), `--help lacks the default of ${option}`)
  }
  for (const [flag, [, envVar]] of Object.entries(OPTIONS)) {
    assert.match(text, new RegExp(`^ {2}--${flag} <(n|value)> {2}\\(${envVar}; default `, 'm'))
  }
})

test('README.md "Configuration" lists every option, with its flag, env var and default', async () => {
  const rows = await readmeRows()
  const missing = Object.keys(DEFAULTS).filter((option) => !rows.some((r) => r.options.includes(option)))
  assert.deepEqual(missing, [], `README.md "Configuration" lacks ${missing.join(', ')}`)
  for (const [option, value] of Object.entries(DEFAULTS)) {
    const row = /** @type {typeof rows[number]} */ (rows.find((r) => r.options.includes(option)))
    const names = flagOf.get(option)
    if (names === undefined) {
      assert.deepEqual([row.flags, row.envs], [[], []], `README.md gives ${option} a flag or env var; it has none (cli-options.js)`)
    } else {
      assert.ok(row.flags.includes(names.flag), `README.md row of ${option} lacks --${names.flag}`)
      assert.ok(row.envs.includes(names.envVar), `README.md row of ${option} lacks ${names.envVar}`)
    }
    // a row of several options gives their defaults in the same order ("200 / 400"); null defaults are prose
    if (value === null || typeof value === 'object') continue
    const cell = row.defaults.length === row.options.length ? row.defaults[row.options.indexOf(option)] : row.defaults.join(' / ')
    assert.equal(cell, String(value), `README.md gives ${option} the default ${cell}; config.js has ${value}`)
  }
})

test('README.md "Configuration" names no option, flag or env var that does not exist', async () => {
  const envVars = new Set(Object.values(OPTIONS).map(([, envVar]) => envVar))
  for (const row of await readmeRows()) {
    for (const option of row.options) assert.ok(Object.hasOwn(DEFAULTS, option), `README.md lists option ${option}, which config.js does not have`)
    for (const flag of row.flags) assert.ok(Object.hasOwn(OPTIONS, flag), `README.md lists --${flag}, which cli-options.js does not read`)
    for (const envVar of row.envs) assert.ok(envVars.has(envVar), `README.md lists ${envVar}, which cli-options.js does not read`)
  }
})

test('helpText lists flags, then the options without one; wraps; refuses a missing or stale description', () => {
  const options = { port: /** @type {const} */ (['port', 'PORT', Number]), host: /** @type {const} */ (['host', 'HOST', String]) }
  const defaults = { port: 7070, host: '127.0.0.1', redisUrl: null }
  const descriptions = { port: 'the port', host: 'where to bind', redisUrl: 'a long description '.repeat(8).trim() }
  const text = helpText(descriptions, { options, defaults, width: 60 })
  assert.match(text, /^Usage: maygh-coordinator/)
  assert.match(text, /^ {2}--port <n> {2}\(PORT; default 7070\)\n {8}the port$/m)
  assert.match(text, /^ {2}--host <value> {2}\(HOST; default 127\.0\.0\.1\)\n {8}where to bind$/m)
  assert.match(text, /^ {2}-h, --help$/m)
  assert.ok(text.indexOf('redisUrl  (default none)') > text.indexOf('--help'), 'options without a flag come after the flags')
  assert.ok(text.split('\n').every((line) => line.length <= 60), 'lines fit the width')
  assert.throws(() => helpText({ port: 'p', host: 'h' }, { options, defaults }), /no description for option\(s\) redisUrl/)
  assert.throws(() => helpText({ ...descriptions, gone: 'x' }, { options, defaults }), /unknown option\(s\) gone/)
  assert.throws(() => helpText(descriptions, { options: { ...options, x: ['nope', 'X', String] }, defaults }), TypeError)
})

test('wantsHelp sees --help and -h, not after --', () => {
  assert.equal(wantsHelp(['--port', '1', '--help']), true)
  assert.equal(wantsHelp(['-h']), true)
  assert.equal(wantsHelp(['--port', '1']), false)
  assert.equal(wantsHelp(['--', '--help']), false)
})
