import { test } from 'node:test'
import assert from 'node:assert/strict'
import { closeSync, existsSync, openSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clientAddress, createLogger, logClientError, logDestination, repeatedErrors } from '../src/logger.js'
import { ERRORS, MayghError } from '../../protocol/index.js'
import { optionsFrom } from '../src/cli-options.js'
import { resolveConfig } from '../src/config.js'

/** @returns {{ lines: Record<string, any>[], destination: { write: (line: string) => void } }} a destination that keeps each line, parsed */
function capture () {
  /** @type {Record<string, any>[]} */
  const lines = []
  return { lines, destination: { write: (line) => { lines.push(JSON.parse(line)) } } }
}

test('the level is the one given (the logLevel option, LOG_LEVEL in the bin), info by default; a bad one throws', () => {
  const { destination } = capture()
  assert.equal(createLogger({ level: 'error', destination }).level, 'error')
  assert.equal(createLogger({ destination }).level, 'info')
  assert.throws(() => createLogger({ level: 'verbose', destination }), /must be one of fatal, error, warn, info, debug, trace, silent/)
  assert.equal(optionsFrom([], { LOG_LEVEL: 'debug', LOG_IPS: 'yes' }).logLevel, 'debug')
  assert.equal(optionsFrom([], { LOG_IPS: 'yes' }).logIps, true)
  assert.throws(() => optionsFrom([], { LOG_IPS: 'maybe' }), { code: 'MGH_CLI_ERR_BAD_VALUE', message: /LOG_IPS must be true or false/ })
  assert.throws(() => resolveConfig({ logLevel: 'loud' }), TypeError)
})

test('lines are JSON with the level by name; silent logs nothing', () => {
  const { lines, destination } = capture()
  const log = createLogger({ level: 'warn', destination })
  log.info('not shown')
  log.warn({ conn: 7 }, 'shown')
  assert.equal(lines.length, 1)
  assert.deepEqual([lines[0].level, lines[0].conn, lines[0].msg], ['warn', 7, 'shown'])
  const quiet = capture()
  createLogger({ level: 'silent', destination: quiet.destination }).fatal('nothing')
  assert.equal(quiet.lines.length, 0)
})

test('client addresses are left out or redacted unless logIps', () => {
  const ip = '203.0.113.7'
  const req = { socket: { remoteAddress: ip }, headers: { 'x-forwarded-for': ip } }
  assert.equal(clientAddress(req, false), undefined)
  assert.equal(clientAddress(req, true), ip)

  const hidden = capture()
  const log = createLogger({ destination: hidden.destination })
  log.info({ ip: clientAddress(req, false) }, 'connected')
  // what a careless call site might write: each is redacted anyway
  log.info({ ip, remoteAddress: ip, socket: { remoteAddress: ip }, req, headers: req.headers }, 'careless')
  assert.equal(hidden.lines.length, 2)
  assert.ok(!('ip' in hidden.lines[0]), 'an address not given is not a field at all')
  assert.ok(!JSON.stringify(hidden.lines).includes(ip), JSON.stringify(hidden.lines))
  assert.equal(hidden.lines[1].ip, '[redacted]')

  const shown = capture()
  createLogger({ logIps: true, destination: shown.destination }).info({ ip: clientAddress(req, true) }, 'connected')
  assert.equal(shown.lines[0].ip, ip)
})

test('a client error is logged once per connection and code; the rest are counted', () => {
  const { lines, destination } = capture()
  const log = createLogger({ destination })
  const a = { id: 1, peerId: 'shard~aaaaaaaaaaaaaaaaaaaaaa', errorCounts: null }
  const b = { id: 2, peerId: null, errorCounts: null }
  const limited = new MayghError(ERRORS.MGH_ERR_RATE_LIMITED)
  assert.equal(logClientError(log, a, limited.code, limited), true)
  for (let i = 0; i < 5; i++) assert.equal(logClientError(log, a, limited.code, limited), false)
  assert.equal(logClientError(log, a, 'MGH_ERR_BAD_JSON', new MayghError(ERRORS.MGH_ERR_BAD_JSON)), true)
  assert.equal(logClientError(log, b, limited.code, limited), true, 'another connection logs its own first')
  assert.equal(logClientError(log, b, 'MGH_ERR_STORE', new Error('ECONNREFUSED')), true)

  assert.deepEqual(lines.map((l) => [l.level, l.conn, l.peer, l.code]), [
    ['warn', 1, a.peerId, 'MGH_ERR_RATE_LIMITED'],
    ['warn', 1, a.peerId, 'MGH_ERR_BAD_JSON'],
    ['warn', 2, undefined, 'MGH_ERR_RATE_LIMITED'],
    ['warn', 2, undefined, 'MGH_ERR_STORE']
  ])
  assert.equal(lines[0].msg, limited.message)
  assert.equal(lines[0].err, undefined, 'a client error carries no stack')
  assert.match(lines[3].err.stack, /ECONNREFUSED/, 'a server-side failure carries its stack')
  assert.deepEqual(repeatedErrors(a), { MGH_ERR_RATE_LIMITED: 5 })
  assert.equal(repeatedErrors(b), undefined)
  assert.equal(repeatedErrors({ id: 3, peerId: null, errorCounts: null }), undefined)
})

test('logDestination writes every line, and end() resolves once they are written', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-log-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const fd = openSync(join(dir, 'log'), 'w') // end() closes it (fd 1 and 2 it leaves open)
  const destination = logDestination({ fd, onFailure: () => assert.fail('a file that takes the lines has not failed') })
  const log = createLogger({ destination })
  for (let i = 0; i < 1000; i++) log.info({ i }, 'line')
  await destination.end(60_000)
  const lines = (await readFile(join(dir, 'log'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
  assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 1000 }, (_, i) => i))
  log.info('after the end: dropped, not thrown')
  assert.equal(destination.failure(), null)
})

test('logDestination gives up an output that fails (a full disk): told once, later lines dropped, end() resolves', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, async (t) => {
  const fd = openSync('/dev/full', 'w')
  t.after(() => closeSync(fd))
  /** @type {Error[]} */
  const failures = []
  /** @type {(err: Error) => void} */
  let failed = () => {}
  const told = new Promise((resolve) => { failed = resolve })
  const destination = logDestination({ fd, onFailure: (err) => { failures.push(err); failed(err) } })
  const log = createLogger({ destination })
  log.info('first')
  await told
  for (let i = 0; i < 100; i++) log.warn({ i }, 'into a full disk')
  await destination.end(60_000)
  assert.deepEqual(failures.map((err) => /** @type {NodeJS.ErrnoException} */ (err).code), ['ENOSPC'])
  assert.equal(/** @type {NodeJS.ErrnoException} */ (destination.failure())?.code, 'ENOSPC')
})
