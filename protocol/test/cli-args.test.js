import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseArgs } from 'node:util'
import { CLI_ERRORS, MayghError, SIM_ERRORS, commandError, flagHelp, readArgs } from '../index.js'

/** @type {Record<string, import('../cli-args.js').FlagSpec>} */
const FLAGS = {
  port: { type: 'string', arg: 'N', help: 'the port' },
  tag: { type: 'string', multiple: true, arg: 'T', help: 'a tag (repeatable)' },
  json: { type: 'boolean', help: 'JSON out' },
  help: { type: 'boolean', short: 'h', help: 'this help' }
}

/**
 * @param {string[]} args
 * @param {Parameters<typeof readArgs>[2]} [how]
 */
function read (args, how) {
  const { tokens } = parseArgs({ args, options: FLAGS, strict: false, allowPositionals: true, tokens: true })
  return readArgs(/** @type {import('../cli-args.js').ArgToken[]} */ (tokens), FLAGS, how)
}

test('readArgs takes values next or after "=", negative numbers next, the last of a flag given twice, every one of a multiple', () => {
  assert.deepEqual(read(['--port', '7070', '--json']), { values: { port: '7070', json: true }, positionals: [] })
  assert.deepEqual(read(['--port=-1']).values, { port: '-1' })
  for (const negative of ['-1', '-.5', '-2e3']) assert.deepEqual(read(['--port', negative]).values, { port: negative })
  assert.deepEqual(read(['--port', '-']).values, { port: '-' }, 'a lone "-" (stdin) is a value')
  assert.deepEqual(read(['--port', '1', '--port', '2']).values, { port: '2' })
  assert.deepEqual(read(['--tag', 'a', '--tag=b']).values, { tag: ['a', 'b'] })
  assert.deepEqual(read(['-h']).values, { help: true })
  assert.deepEqual(read(['dir', '--', '--json'], { positionals: 2 }).positionals, ['dir', '--json'], 'after --, flags are arguments')
})

test('readArgs refuses, naming the flag as typed, with the code it is given', () => {
  for (const [args, message] of /** @type {[string[], RegExp][]} */ ([
    [['--nope'], /: --nope is not a flag of this command/],
    [['--nope=1'], /: --nope is not a flag/],
    [['-x'], /: -x is not a flag/],
    [['--port'], /: --port needs a value$/],
    [['--port', '--json'], /: --port needs a value, got the flag --json \(a value that starts with "-" is written --port=VALUE\)/],
    [['--port', '-x'], /: --port needs a value, got the flag -x/],
    [['--json=1'], /: --json takes no value, got --json=1/],
    [['-h=1'], /: -= is not a flag/], // short flags group: -h, -=, -1
    [['stray'], /: unexpected argument "stray" \(it takes flags only\)/]
  ])) {
    assert.throws(() => read(args), (err) => {
      assert.ok(err instanceof MayghError)
      assert.equal(err.code, 'MGH_CLI_ERR_BAD_FLAG')
      assert.equal(err.exit, 2)
      assert.match(err.message, message)
      return true
    }, args.join(' '))
  }
  assert.throws(() => read(['a', 'b'], { positionals: 1 }), /unexpected argument "b" \(it takes 1 argument besides its flags\)/)
  assert.throws(() => read(['--nope'], { code: SIM_ERRORS.MGH_SIM_ERR_BAD_FLAG }), { code: 'MGH_SIM_ERR_BAD_FLAG' })
})

test('flagHelp lays out every flag with its value and help, wrapped; a flag without help is refused', () => {
  const lines = flagHelp({ ...FLAGS, port: { ...FLAGS.port, help: 'word '.repeat(30).trim() } }, 40)
  assert.equal(lines[0], '  --port N')
  assert.ok(lines.slice(1, 4).every((line) => line.startsWith('        word') && line.length <= 40))
  assert.ok(lines.includes('  -h, --help') && lines.includes('        this help'))
  assert.ok(lines.includes('  --json'))
  assert.throws(() => flagHelp({ x: { type: 'boolean' } }), /--x has no help/)
  assert.throws(() => flagHelp({ x: { type: 'string', help: 'x' } }), /--x has no help for its value/)
})

test('commandError: a coded error with its exit status, a system error with its code once, anything else as a bug', () => {
  assert.deepEqual(commandError('maygh-x', new MayghError(CLI_ERRORS.MGH_CLI_ERR_MISSING, 'DIR')), { line: 'maygh-x: MGH_CLI_ERR_MISSING: a required flag, argument or environment variable is missing: DIR', exit: 2 })
  const enoent = Object.assign(new Error("ENOENT: no such file or directory, scandir 'x'"), { code: 'ENOENT' })
  assert.deepEqual(commandError('maygh-x', enoent), { line: "maygh-x: ENOENT: no such file or directory, scandir 'x'", exit: 1 })
  assert.deepEqual(commandError('maygh-x', Object.assign(new Error('gone'), { code: 'ECONNRESET' })), { line: 'maygh-x: ECONNRESET: gone', exit: 1 })
  const bug = commandError('maygh-x', new TypeError('x is undefined'))
  assert.equal(bug.exit, 1)
  assert.match(bug.line, /^maygh-x: internal error \(please report it\): TypeError: x is undefined\n\s+at /)
})
