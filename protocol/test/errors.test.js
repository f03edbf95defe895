import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { CLI_ERRORS, CLIENT_ERRORS, COORDINATOR_ERRORS, DEMO_ERRORS, ERRORS, MayghError, SIM_ERRORS } from '../index.js'

const root = new URL('../../', import.meta.url)
/** Which document lists each area's codes. */
const DOC_OF_AREA = { coordinator: 'README.md', client: 'README.md', cli: 'README.md', sim: 'docs/simulator.md', demo: 'demo-site/README.md' }
/** Every document that may name a code. */
const docs = ['README.md', 'demo-site/README.md', ...(await readdir(new URL('docs/', root))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const text = Object.fromEntries(await Promise.all(docs.map(async (d) => [d, await readFile(new URL(d, root), 'utf8')])))

test('every code is documented where its area says', () => {
  for (const [code, spec] of Object.entries(ERRORS)) {
    const doc = DOC_OF_AREA[spec.area]
    assert.ok(text[doc].includes(`\`${code}\``), `${code} (${spec.area}) missing from ${doc}`)
  }
})

test('every code a document names exists in the registry', () => {
  for (const [doc, body] of Object.entries(text)) {
    // `MGH_SIM_ERR_*` and the like name a family, not a code
    for (const [name] of body.matchAll(/\bMGH_[A-Z0-9_]+\b(?!\*)/g)) {
      assert.ok(Object.hasOwn(ERRORS, name), `${doc} names ${name}, which no longer exists`)
    }
  }
})

test('codes are named for their area and carry what their area needs', () => {
  const prefix = { coordinator: /^MGH_ERR_/, client: /^MGH_ERR_/, cli: /^MGH_CLI_ERR_/, sim: /^MGH_SIM_ERR_/, demo: /^MGH_DEMO_/ }
  for (const [code, spec] of Object.entries(ERRORS)) {
    assert.match(code, prefix[spec.area])
    assert.ok(spec.message.length > 0)
    if (spec.area === 'sim' || spec.area === 'cli') assert.equal(spec.exit, 2, code)
    if (spec.area === 'demo') assert.ok(spec.status !== undefined && spec.status >= 400, code)
  }
})

test('each code is in exactly one area table, under its own name', () => {
  const tables = [COORDINATOR_ERRORS, CLIENT_ERRORS, CLI_ERRORS, SIM_ERRORS, DEMO_ERRORS]
  assert.equal(tables.reduce((n, t) => n + Object.keys(t).length, 0), Object.keys(ERRORS).length)
  for (const [code, spec] of Object.entries(ERRORS)) {
    assert.equal(spec.code, code)
    assert.ok(Object.isFrozen(spec))
  }
})

test('MayghError carries the code, the detail and the registry fields', () => {
  const err = new MayghError(ERRORS.MGH_ERR_BAD_FIELD, '"x" must be y')
  assert.equal(err.code, 'MGH_ERR_BAD_FIELD')
  assert.equal(err.message, 'a field is missing or has the wrong type: "x" must be y')
  assert.equal(new MayghError(ERRORS.MGH_ERR_SHUTTING_DOWN).close, 1012)
  assert.equal(new MayghError(ERRORS.MGH_ERR_STORE).status, 503)
  const cause = new Error('root')
  const simErr = new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'x', { cause })
  assert.equal(simErr.cause, cause)
  assert.equal(simErr.exit, 2)
  assert.ok(new MayghError(ERRORS.MGH_ERR_STALL) instanceof Error)
})
