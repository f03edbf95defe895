// docs/simulator.md documents every flag and every default (its error codes: protocol/test/errors.test.js).
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import { INPUT_DEFAULTS, SIM_DEFAULTS, SIM_OPTION_SPECS } from '../src/config.js'
import { ETSY_DEFAULTS } from '../src/synthetic/etsy-params.js'

const doc = await readFile(new URL('../../docs/simulator.md', import.meta.url), 'utf8')

test('every model flag is documented with its default', () => {
  for (const [key, spec] of Object.entries(SIM_OPTION_SPECS)) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`--${spec.flag}\``))
    assert.ok(row, `--${spec.flag} has no row in docs/simulator.md`)
    const def = /** @type {any} */ (SIM_DEFAULTS)[key]
    // byte sizes as the flags take them: 50m, 4m
    const mib = (spec.kind === 'bytes' || spec.kind === 'budget') && def > 0 && def % 2 ** 20 === 0
    const shown = def === Infinity ? 'inf' : def === '' ? "''" : mib ? `${def / 2 ** 20}m` : String(def)
    assert.ok(row.includes(`\`${shown}\``), `--${spec.flag}: default ${shown} not in "${row}"`)
    // a choice lists its values
    for (const value of spec.values ?? []) assert.ok(row.includes(`\`${value}\``), `--${spec.flag}: value ${value} not in "${row}"`)
  }
})

test('the input flags are documented with their defaults', () => {
  const rowOf = (/** @type {string} */ flag) => doc.split('\n').find((line) => line.startsWith(`| \`--${flag}`))
  assert.ok(doc.includes('\n| `--sort` | off |'), '--sort has no row')
  assert.ok(rowOf('order-tolerance')?.includes(`\`${INPUT_DEFAULTS.orderTolerance}\``), '--order-tolerance and its default')
  assert.equal(INPUT_DEFAULTS.sortMemoryBytes, 512 * 1024 * 1024, 'the docs say 512m')
  assert.ok(rowOf('sort-memory')?.includes('`512m`'), '--sort-memory and its default')
})

test('every static-asset extension is listed in the docs', async () => {
  const { STATIC_EXTENSIONS } = await import('../src/input/static-assets.js')
  for (const [kind, list] of Object.entries(STATIC_EXTENSIONS)) {
    const row = doc.split('\n').find((line) => line.startsWith(`| ${kind} |`))
    assert.ok(row, `no row for ${kind}`)
    assert.deepEqual(/** @type {string} */ (row).split('`')[1].split(' '), list, kind)
  }
})

test('every generator parameter is documented with its default', () => {
  for (const [key, def] of Object.entries(ETSY_DEFAULTS)) {
    const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
    const row = doc.split('\n').find((line) => line.startsWith(`| \`--${flag}\``))
    assert.ok(row, `--${flag} has no row in docs/simulator.md`)
    assert.ok(row.includes(`\`${def}\``), `--${flag}: default ${def} not in "${row}"`)
  }
})
