// maygh-coordinator and maygh-token as a user runs them: bad flags, values and
// environment get a registry code and the flag or variable as it was typed,
// exit 2, no stack trace; --help explains every option of the command's table.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { ERRORS } from '../../protocol/index.js'
import { OPTIONS } from '../src/cli-options.js'
import { DESCRIPTIONS } from '../src/config.js'
import { TOKEN_FLAGS } from '../src/token-cli.js'

const COORDINATOR = fileURLToPath(new URL('../bin/maygh-coordinator.js', import.meta.url))
const TOKEN = fileURLToPath(new URL('../bin/maygh-token.js', import.meta.url))
const SECRET = 'a-secret-of-at-least-32-characters-long'
/** Nothing inherited: each case gives the environment it means. */
const BARE_ENV = { PATH: process.env.PATH ?? '' }

/**
 * @param {string} bin
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run (bin, args, env = BARE_ENV) {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env, timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? /** @type {any} */ (err).code : 0, stdout, stderr })
    })
  })
}

/**
 * One bad use: exit 2, nothing on stdout, one line on stderr with the code and the name as typed.
 * @param {string} program
 * @param {{ code: number, stdout: string, stderr: string }} result
 * @param {string} code
 * @param {string} named what the message must name (the flag as typed, the variable)
 */
function assertRefused (program, result, code, named) {
  assert.equal(result.code, 2, result.stderr)
  assert.equal(result.stdout, '')
  assert.ok(result.stderr.startsWith(`${program}: ${code}: `), result.stderr)
  assert.ok(result.stderr.includes(named), `${result.stderr} names ${named}`)
  assert.equal(result.stderr.trim().split('\n').length, 1, 'one line, no stack trace')
  assert.doesNotMatch(result.stderr, /\n\s+at |TypeError|"[a-z]+[A-Z]\w*"/, 'no stack, no internal name')
  assert.equal(ERRORS[/** @type {keyof typeof ERRORS} */ (code)]?.exit, 2, `${code} is a registry code with exit 2`)
}

test('maygh-coordinator: each bad flag, value or variable is refused naming it as given', async () => {
  const cases = /** @type {[string[], NodeJS.ProcessEnv, string, string][]} */ ([
    [['--port', 'abc'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--port must be an integer from 0 to 65535, got "abc"'],
    [['--port=70000'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--port must be an integer from 0 to 65535, got 70000'],
    [['--port', '-5'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--port must be an integer from 0 to 65535, got -5'],
    [['--port', '1.5'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--port'],
    [[], { PORT: 'abc' }, 'MGH_CLI_ERR_BAD_VALUE', 'PORT must be an integer'],
    [['--log-level', 'loud'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--log-level must be one of'],
    [[], { LOG_LEVEL: 'loud' }, 'MGH_CLI_ERR_BAD_VALUE', 'LOG_LEVEL must be one of'],
    [['--shard-ttl-ms', '1500'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--shard-ttl-ms (1500) must be at least twice --shard-heartbeat-ms'],
    [[], { SHARD_TTL_MS: '1500' }, 'MGH_CLI_ERR_BAD_VALUE', 'SHARD_TTL_MS (1500)'],
    [['--log-ips', 'maybe'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--log-ips must be true or false'],
    [['--ice-servers', '[nope'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--ice-servers'],
    [['--redis-url', 'http://x'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--redis-url must be a redis://'],
    [['--token-secrets', 'short'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--token-secrets: a token secret must be at least 32 characters'],
    // -1 is taken as --stun-port's value (documented: no STUN server), so what is refused is the missing ICE servers…
    [['--stun-port', '-1'], {}, 'MGH_CLI_ERR_BAD_VALUE', 'with no STUN server (--stun-port -1), --ice-servers must be given'],
    // …and the flag after it is read as a flag
    [['--stun-port', '-1', '--port', 'abc'], {}, 'MGH_CLI_ERR_BAD_VALUE', '--port must be'],
    [['--nope'], {}, 'MGH_CLI_ERR_BAD_FLAG', '--nope is not a flag'],
    [['--port'], {}, 'MGH_CLI_ERR_BAD_FLAG', '--port needs a value'],
    [['--port', '--host', '0.0.0.0'], {}, 'MGH_CLI_ERR_BAD_FLAG', '--port needs a value, got the flag --host'],
    [['7070'], {}, 'MGH_CLI_ERR_BAD_FLAG', 'unexpected argument "7070"'],
    [['-x'], {}, 'MGH_CLI_ERR_BAD_FLAG', '-x is not a flag']
  ])
  for (const [args, env, code, named] of cases) {
    assertRefused('maygh-coordinator', await run(COORDINATOR, args, { ...BARE_ENV, ...env }), code, named)
  }
})

test('maygh-coordinator: a port in use is a failure to start, exit 1, without a stack trace', async (t) => {
  const taken = createServer()
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', () => resolve(undefined)))
  t.after(() => taken.close())
  const { port } = /** @type {import('node:net').AddressInfo} */ (taken.address())
  const result = await run(COORDINATOR, ['--port', String(port), '--stun-port', '0', '--log-level', 'silent'])
  assert.equal(result.code, 1, result.stderr)
  assert.equal(result.stderr, `maygh-coordinator: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`)
})

test('maygh-coordinator --help explains every flag of its table, with its variable and default', async () => {
  for (const args of [['--help'], ['-h'], ['--port', 'abc', '--help']]) {
    const { code, stdout, stderr } = await run(COORDINATOR, args)
    assert.equal(code, 0, stderr)
    const flat = stdout.replace(/\s+/g, ' ')
    for (const [flag, [option, envVar]] of Object.entries(OPTIONS)) {
      assert.match(stdout, new RegExp(`^ {2}--${flag} <(n|value)> {2}\\(${envVar}; default `, 'm'), `--${flag}`)
      assert.ok(flat.includes(DESCRIPTIONS[/** @type {keyof typeof DESCRIPTIONS} */ (option)]), `--${flag} is explained`)
    }
    assert.match(flat, /a negative number may be the next argument \(`--stun-port -1`\)/)
    assert.match(flat, /exits with status 2/)
  }
})

test('maygh-token: each bad flag, value or variable is refused naming it as given', async () => {
  const env = { ...BARE_ENV, TOKEN_SECRETS: SECRET }
  const origin = ['--origin', 'https://shop.example']
  const cases = /** @type {[string[], NodeJS.ProcessEnv, string, string][]} */ ([
    [[], env, 'MGH_CLI_ERR_MISSING', '--origin'],
    [origin, BARE_ENV, 'MGH_CLI_ERR_MISSING', 'TOKEN_SECRETS'],
    [origin, { ...BARE_ENV, TOKEN_SECRETS: 'short' }, 'MGH_CLI_ERR_BAD_VALUE', 'TOKEN_SECRETS: its first secret is 5 characters'],
    [['--origin', 'nope'], env, 'MGH_CLI_ERR_BAD_VALUE', '--origin must be scheme://host[:port], got "nope"'],
    [['--origin', 'https://shop.example/path'], env, 'MGH_CLI_ERR_BAD_VALUE', '--origin must be'],
    [[...origin, '--ttl', 'abc'], env, 'MGH_CLI_ERR_BAD_VALUE', '--ttl must be a whole number of seconds from 1 to 604800 (a week), got "abc"'],
    [[...origin, '--ttl', '-5'], env, 'MGH_CLI_ERR_BAD_VALUE', '--ttl must be a whole number of seconds from 1 to 604800 (a week), got "-5"'],
    [[...origin, '--ttl=0'], env, 'MGH_CLI_ERR_BAD_VALUE', 'got "0"'],
    [[...origin, '--ttl', '604801'], env, 'MGH_CLI_ERR_BAD_VALUE', 'got "604801"'],
    [[...origin, '--visitor', 'v'.repeat(129)], env, 'MGH_CLI_ERR_BAD_VALUE', '--visitor must be at most 128 characters'],
    [['--bogus'], env, 'MGH_CLI_ERR_BAD_FLAG', '--bogus is not a flag'],
    [['--origin'], env, 'MGH_CLI_ERR_BAD_FLAG', '--origin needs a value'],
    [['--origin', '--ttl', '60'], env, 'MGH_CLI_ERR_BAD_FLAG', '--origin needs a value, got the flag --ttl'],
    [[...origin, 'extra'], env, 'MGH_CLI_ERR_BAD_FLAG', 'unexpected argument "extra"'],
    [['--help=yes'], env, 'MGH_CLI_ERR_BAD_FLAG', '--help takes no value']
  ])
  for (const [args, environment, code, named] of cases) {
    assertRefused('maygh-token', await run(TOKEN, args, environment), code, named)
  }
})

test('maygh-token --help explains every flag of its table and TOKEN_SECRETS', async () => {
  const { code, stdout } = await run(TOKEN, ['--help'])
  assert.equal(code, 0)
  const flat = stdout.replace(/\s+/g, ' ')
  for (const [flag, spec] of Object.entries(TOKEN_FLAGS)) {
    assert.match(stdout, new RegExp(`^ {2}(-${spec.short}, )?--${flag}${spec.arg ? ` ${spec.arg}` : ''}$`, 'm'), `--${flag}`)
    assert.ok(spec.help && flat.includes(spec.help), `--${flag} is explained`)
  }
  assert.match(stdout, /^ {2}TOKEN_SECRETS$/m)
})
