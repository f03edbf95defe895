/**
 * Who may use a coordinator: the Origin allow-list and signed join tokens
 * (join-token.js), from the token functions through the CLI to real sockets.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { signJoinToken, verifyJoinToken } from '../src/join-token.js'
import { startCoordinator } from '../src/server.js'
import { resolveConfig } from '../src/config.js'
import { createLogger } from '../src/logger.js'
import { ERRORS, MayghError } from '../../protocol/index.js'
import WebSocket from 'ws'
import { TestClient } from '../../test/support/test-client.js'

const SECRET = 'a-secret-of-at-least-32-characters!'
const OLD_SECRET = 'the-secret-before-rotation-0123456789'
const SHOP = 'https://shop.example'
const TOKEN_CLI = fileURLToPath(new URL('../bin/maygh-token.js', import.meta.url))

/**
 * @param {() => unknown} fn
 * @param {string} code
 */
function throwsCode (fn, code) {
  assert.throws(fn, (err) => err instanceof MayghError && err.code === code, code)
}

test('a token verifies for its origin until it expires; forged, malformed, expired and foreign ones are told apart', () => {
  const now = Date.UTC(2026, 10, 23)
  const token = signJoinToken({ origin: SHOP, visitor: 'v-1', ttlSeconds: 60, now }, SECRET)
  assert.match(token, /^v1\.[\w-]+\.[\w-]{43}$/)
  assert.deepEqual(verifyJoinToken(token, [SECRET], { origin: SHOP, now }), { origin: SHOP, visitor: 'v-1', expiresAt: now / 1000 + 60 })
  assert.equal(verifyJoinToken(token, [SECRET], { origin: SHOP, now: now + 59_999 }).visitor, 'v-1')
  throwsCode(() => verifyJoinToken(token, [SECRET], { origin: SHOP, now: now + 60_000 }), 'MGH_ERR_TOKEN_EXPIRED')
  throwsCode(() => verifyJoinToken(token, [SECRET], { origin: 'https://evil.example', now }), 'MGH_ERR_TOKEN_ORIGIN')
  throwsCode(() => verifyJoinToken(token, [SECRET], { origin: '', now }), 'MGH_ERR_TOKEN_ORIGIN')
  throwsCode(() => verifyJoinToken(token, [OLD_SECRET], { origin: SHOP, now }), 'MGH_ERR_TOKEN_INVALID')
  // Rotation: a token signed with a secret still listed verifies.
  assert.equal(verifyJoinToken(signJoinToken({ origin: SHOP, now }, OLD_SECRET), [SECRET, OLD_SECRET], { origin: SHOP, now }).visitor, '')
  // Changing the payload (a later expiry, another origin) breaks the signature.
  const [, payload, mac] = token.split('.')
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
  for (const forged of [{ ...claims, e: claims.e + 3600 }, { ...claims, o: 'https://evil.example' }]) {
    throwsCode(() => verifyJoinToken(`v1.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`, [SECRET], { origin: forged.o, now }), 'MGH_ERR_TOKEN_INVALID')
  }
  for (const missing of [undefined, '']) throwsCode(() => verifyJoinToken(missing, [SECRET], { origin: SHOP, now }), 'MGH_ERR_TOKEN_MISSING')
  for (const bad of [7, {}, 'x', 'v1.a', `v2.${payload}.${mac}`, `${token}.x`, 'v1.' + 'a'.repeat(2000) + '.b', `v1.e30.${mac}`]) {
    throwsCode(() => verifyJoinToken(bad, [SECRET], { origin: SHOP, now }), 'MGH_ERR_TOKEN_INVALID')
  }
  // A payload the signer would never write, signed all the same, is refused as invalid.
  const odd = Buffer.from(JSON.stringify({ o: SHOP, v: 1, e: 'soon' })).toString('base64url')
  const signedOdd = signJoinToken({ origin: SHOP, now }, SECRET).split('.')[2]
  throwsCode(() => verifyJoinToken(`v1.${odd}.${signedOdd}`, [SECRET], { origin: SHOP, now }), 'MGH_ERR_TOKEN_INVALID')

  for (const [claims, secret, message] of /** @type {[any, string, RegExp][]} */ ([
    [{ origin: 'https://shop.example/path' }, SECRET, /origin must be/],
    [{ origin: 'shop.example' }, SECRET, /origin must be/],
    [{ origin: SHOP, ttlSeconds: 0 }, SECRET, /ttlSeconds/],
    [{ origin: SHOP, visitor: 'v'.repeat(129) }, SECRET, /visitor/],
    [{ origin: SHOP }, 'short', /at least 32 characters/]
  ])) assert.throws(() => signJoinToken(claims, secret), message)
})

test('maygh-token prints a token the coordinators accept, from TOKEN_SECRETS (its bad use: cli.test.js)', async () => {
  const run = promisify(execFile)
  const env = { ...process.env, TOKEN_SECRETS: `${SECRET},${OLD_SECRET}` }
  const { stdout } = await run(process.execPath, [TOKEN_CLI, '--origin', SHOP, '--visitor', 'cli', '--ttl', '120'], { env })
  const claims = verifyJoinToken(stdout.trim(), [SECRET], { origin: SHOP })
  assert.equal(claims.visitor, 'cli')
  assert.ok(Math.abs(claims.expiresAt - Date.now() / 1000 - 120) < 5)
})

test('allowedOrigins and tokenSecrets are checked at start', () => {
  for (const allowedOrigins of [[], ['https://shop.example/'], ['*'], 'https://shop.example']) {
    assert.throws(() => resolveConfig({ port: 0, allowedOrigins: /** @type {any} */ (allowedOrigins) }), /"allowedOrigins"/)
  }
  assert.throws(() => resolveConfig({ tokenSecrets: ['short'] }), /at least 32 characters/)
  assert.throws(() => resolveConfig({ tokenSecrets: [] }), /"tokenSecrets"/)
  assert.deepEqual(resolveConfig({ allowedOrigins: [SHOP, 'http://127.0.0.1:8080'] }).allowedOrigins, [SHOP, 'http://127.0.0.1:8080'])
})

/**
 * Open a socket with an Origin header and read what the coordinator says before it closes.
 * @param {string} url
 * @param {string | undefined} origin
 * @param {object} [join] a join to send (none: just listen)
 * @returns {Promise<{ messages: any[], code: number, reason: string }>}
 */
async function refused (url, origin, join) {
  const ws = new WebSocket(url, origin === undefined ? {} : { origin })
  /** @type {any[]} */
  const messages = []
  // Listening from the start: the refusal may come in the same packet as the upgrade's answer.
  ws.on('message', (data) => messages.push(JSON.parse(String(data))))
  const closed = once(ws, 'close')
  await once(ws, 'open')
  if (join !== undefined) ws.send(JSON.stringify({ type: 'join', ref: 1, ...join }))
  const [code, reason] = await closed
  return { messages, code, reason: String(reason) }
}

test('with an allow-list, only pages of the listed origins are served; the rest are told why and closed (1008)', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, allowedOrigins: [SHOP] })
  try {
    const shopper = await TestClient.open(coordinator.url, { origin: SHOP })
    assert.equal((await shopper.join()).type, 'welcome')
    for (const origin of ['https://evil.example', 'https://shop.example:8443', undefined]) {
      const { messages, code, reason } = await refused(coordinator.url, origin)
      assert.deepEqual(messages.map((m) => m.code), ['MGH_ERR_ORIGIN_NOT_ALLOWED'], String(origin))
      assert.match(messages[0].message, origin === undefined ? /no Origin header/ : new RegExp(origin))
      assert.equal(code, 1008)
      assert.equal(reason, ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED.message)
    }
    assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /maygh_closes_total\{reason="origin"\} 3/)
    assert.equal(coordinator.sessions.size, 1, 'only the shop\'s visitor joined')
    await shopper.close()
  } finally {
    await coordinator.close()
  }
})

test('with token secrets, a join needs a valid token for its page\'s origin; the welcome carries a fresh one that works next time', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, allowedOrigins: [SHOP, 'https://other.example'], tokenSecrets: [SECRET, OLD_SECRET], tokenRenewSeconds: 7200 })
  try {
    const now = Date.now()
    const cases = /** @type {[string, object, string][]} */ ([
      [SHOP, {}, 'MGH_ERR_TOKEN_MISSING'],
      [SHOP, { token: signJoinToken({ origin: SHOP, ttlSeconds: 60, now: now - 120_000 }, SECRET) }, 'MGH_ERR_TOKEN_EXPIRED'],
      [SHOP, { token: signJoinToken({ origin: SHOP }, 'someone-elses-secret-0123456789abcdef') }, 'MGH_ERR_TOKEN_INVALID'],
      [SHOP, { token: 'v1.garbage' }, 'MGH_ERR_TOKEN_INVALID'],
      ['https://other.example', { token: signJoinToken({ origin: SHOP }, SECRET) }, 'MGH_ERR_TOKEN_ORIGIN']
    ])
    for (const [origin, fields, code] of cases) {
      const { messages, code: closeCode } = await refused(coordinator.url, origin, fields)
      assert.deepEqual(messages.map((m) => [m.type, m.code, m.ref]), [['error', code, 1]], code)
      assert.equal(closeCode, 1008, code)
    }
    assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /maygh_closes_total\{reason="token"\} 5/)
    assert.equal((await TestClient.open(coordinator.url, { origin: SHOP }).then((c) => c.request({ type: 'join', token: 7 }))).code, 'MGH_ERR_BAD_FIELD')

    const visitor = await TestClient.open(coordinator.url, { origin: SHOP })
    const welcome = await visitor.request({ type: 'join', token: signJoinToken({ origin: SHOP, visitor: 'alice' }, OLD_SECRET) })
    assert.equal(welcome.type, 'welcome', 'a secret being rotated out still verifies')
    assert.equal(coordinator.sessions.get(welcome.id)?.visitor, 'alice')
    const renewed = verifyJoinToken(welcome.token, [SECRET], { origin: SHOP })
    assert.equal(renewed.visitor, 'alice', 'renewed with the current secret, for the same visitor')
    assert.ok(Math.abs(renewed.expiresAt - Date.now() / 1000 - 7200) < 5, 'valid for tokenRenewSeconds')
    await visitor.close()
    const again = await TestClient.open(coordinator.url, { origin: SHOP })
    assert.equal((await again.request({ type: 'join', token: welcome.token })).type, 'welcome')
    await again.close()
  } finally {
    await coordinator.close()
  }
})

test('a coordinator open to every site says so loudly at start', async () => {
  for (const [options, warned] of /** @type {[object, boolean][]} */ ([[{}, true], [{ allowedOrigins: [SHOP] }, false], [{ tokenSecrets: [SECRET] }, false]])) {
    /** @type {any[]} */
    const lines = []
    const log = createLogger({ level: 'warn', destination: { write: (line) => { lines.push(JSON.parse(line)) } } })
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, ...options }, { log })
    await coordinator.close()
    assert.equal(lines.some((l) => l.level === 'warn' && /open coordinator: pages of any site may use it/.test(l.msg)), warned, JSON.stringify(options))
  }
})
