import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveConfig, DEFAULTS } from '../src/config.js'
import { optionsFrom } from '../src/cli-options.js'
import { POLICY_DEFAULTS } from '../../policy/peer-selection.js'
import { REPORT_DEFAULTS } from '../../policy/report-rule.js'

test('defaults are documented values, frozen', () => {
  const config = resolveConfig()
  assert.equal(config.port, 7070)
  assert.equal(config.stunPort, 3478)
  assert.equal(config.redisUrl, null)
  assert.equal(config.shardId, null)
  assert.equal(config.shardTtlMs, 3000)
  assert.ok(Object.isFrozen(config))
  assert.ok(Object.isFrozen(DEFAULTS))
})

test('the defaults the simulator replays are the shared rules\' (policy/): peer selection, reports and quarantine', () => {
  for (const shared of [POLICY_DEFAULTS, REPORT_DEFAULTS]) {
    for (const [key, value] of Object.entries(shared)) assert.equal(/** @type {any} */ (DEFAULTS)[key], value, key)
  }
})

test('bad options and impossible combinations throw TypeError', () => {
  const cases = [
    { nope: 1 },
    { port: -1 },
    { port: 'x' },
    { maxHolders: 0 },
    { redisUrl: 'http://x' },
    { maxMessageBytes: 4096, hardMaxMessageBytes: 1024 },
    { maxAssetsPerMessage: 20, maxAssetsPerPeer: 10 },
    { maxHolders: 8, candidateSample: 4 },
    { stunPort: -1 },
    { host: '0.0.0.0' },
    { iceServers: [{ url: 'stun:x' }] },
    { shardId: 'has space' },
    { shardId: 'x'.repeat(49) },
    { shardHeartbeatMs: 1000, shardTtlMs: 1500 },
    { publicUrl: 'http://x' }
  ]
  for (const options of cases) assert.throws(() => resolveConfig(/** @type {any} */ (options)), TypeError, JSON.stringify(options))
  assert.equal(resolveConfig({ host: '0.0.0.0', iceServers: [{ urls: 'stun:stun.example.org:3478' }] }).host, '0.0.0.0')
})

test('flags win over environment variables', () => {
  const options = optionsFrom(['--port', '9000', '--ice-servers', 'stun:a:1,stun:b:2'], { PORT: '8000', REDIS_URL: 'redis://r:6379', STUN_PORT: '' })
  assert.deepEqual(options, { port: 9000, redisUrl: 'redis://r:6379', iceServers: [{ urls: 'stun:a:1' }, { urls: 'stun:b:2' }] })
  assert.deepEqual(optionsFrom([], { ICE_SERVERS: '[{"urls":"turn:t:3478","username":"u","credential":"c"}]' }).iceServers, [{ urls: 'turn:t:3478', username: 'u', credential: 'c' }])
})

test('a negative number is a flag\'s value (--stun-port -1, documented); messages name options as the caller says', () => {
  assert.deepEqual(optionsFrom(['--stun-port', '-1', '--ice-servers', 'stun:s:3478'], {}), { stunPort: -1, iceServers: [{ urls: 'stun:s:3478' }] })
  assert.throws(() => resolveConfig({ shardTtlMs: 1500 }), /option "shardTtlMs" \(1500\) must be at least twice "shardHeartbeatMs" \(1000\)/)
  assert.throws(() => resolveConfig({ shardTtlMs: 1500 }, { nameOf: (option) => `<${option}>` }), /option <shardTtlMs> \(1500\) must be at least twice <shardHeartbeatMs>/)
  assert.throws(() => optionsFrom(['--port', '12abc'], {}), { code: 'MGH_CLI_ERR_BAD_VALUE', message: /--port must be an integer from 0 to 65535, got "12abc"/ })
})
