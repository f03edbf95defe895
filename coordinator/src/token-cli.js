/**
 * The `maygh-token` command: prints a join token (join-token.js) for pages of
 * `--origin`, signed with the first secret in TOKEN_SECRETS, the coordinators'
 * own variable, so one environment serves both. A site's backend would rather
 * call `signJoinToken` per page view; this is for scripts and trying it out.
 * Bad use prints `maygh-token: CODE: message` (protocol/errors.js, CLI_ERRORS)
 * and exits with status 2.
 */
import { parseArgs } from 'node:util'
import { CLI_ERRORS, MayghError, commandError, flagHelp, readArgs } from '../../protocol/index.js'
import { DEFAULT_TOKEN_TTL_SECONDS, MAX_TOKEN_TTL_SECONDS, MAX_VISITOR_LENGTH, checkSecret, isOrigin, signJoinToken } from './join-token.js'

/** The flags, with their help. @type {Readonly<Record<string, import('../../protocol/cli-args.js').FlagSpec>>} */
export const TOKEN_FLAGS = Object.freeze({
  origin: { type: 'string', arg: 'ORIGIN', help: 'required: the origin of the pages the token is for, scheme://host[:port] (`https://shop.example`), as browsers send it in the Origin header; a coordinator refuses the token from a page of any other origin' },
  visitor: { type: 'string', arg: 'ID', help: `the site's name for the visitor (a session id's hash, say; at most ${MAX_VISITOR_LENGTH} characters): what quarantine and the rate limit follow across the visitor's reconnections; default none` },
  ttl: { type: 'string', arg: 'SECONDS', help: `how long the token is accepted, from now: a whole number from 1 to ${MAX_TOKEN_TTL_SECONDS} (a week); default ${DEFAULT_TOKEN_TTL_SECONDS}. A page that stays open longer still reconnects: each welcome carries a fresh token (the coordinators' tokenRenewSeconds)` },
  help: { type: 'boolean', short: 'h', help: 'print this help and exit' }
})

/** @returns {string} the --help text */
export function tokenHelp () {
  return [
    'Usage: TOKEN_SECRETS=secret[,older…] maygh-token --origin ORIGIN [--visitor ID] [--ttl SECONDS]',
    '',
    'Prints a join token for pages of ORIGIN, which the coordinators that share',
    'TOKEN_SECRETS accept until it expires. Put it in the page:',
    '  <script src="/maygh.js" data-coordinator="…" data-token="TOKEN"></script>',
    '',
    'Options:',
    ...flagHelp(TOKEN_FLAGS),
    '',
    'Environment:',
    '  TOKEN_SECRETS',
    '        required: the coordinators\' secrets, comma separated, each at least 32',
    '        characters; the first signs (the others only matter to coordinators,',
    '        which still accept tokens they signed: rotation)',
    '',
    'A bad flag, value or environment prints "maygh-token: CODE: message" on',
    'stderr and exits with status 2 (codes: README.md, "Error codes").',
    ''
  ].join('\n')
}

/**
 * Runs the command.
 * @param {string[]} argv the arguments after the program name
 * @param {NodeJS.ProcessEnv} env
 * @param {{ stdout: { write: (text: string) => unknown }, stderr: { write: (text: string) => unknown } }} io
 * @returns {number} exit status
 */
export function tokenMain (argv, env, { stdout, stderr }) {
  try {
    const { tokens } = parseArgs({ args: argv, options: TOKEN_FLAGS, strict: false, allowPositionals: true, tokens: true })
    const values = /** @type {Record<string, string | undefined> & { help?: boolean }} */ (readArgs(/** @type {import('../../protocol/cli-args.js').ArgToken[]} */ (tokens), TOKEN_FLAGS).values)
    if (values.help) {
      stdout.write(tokenHelp())
      return 0
    }
    const { origin, visitor, ttl } = values
    if (origin === undefined) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_MISSING, '--origin (the origin of the pages the token is for)')
    if (!isOrigin(origin)) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `--origin must be scheme://host[:port], got ${JSON.stringify(origin)}`)
    if (visitor !== undefined && visitor.length > MAX_VISITOR_LENGTH) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `--visitor must be at most ${MAX_VISITOR_LENGTH} characters, got ${visitor.length}`)
    let ttlSeconds
    if (ttl !== undefined) {
      ttlSeconds = /^\s*\d+\s*$/.test(ttl) ? Number(ttl) : NaN
      if (!(ttlSeconds >= 1 && ttlSeconds <= MAX_TOKEN_TTL_SECONDS)) {
        throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `--ttl must be a whole number of seconds from 1 to ${MAX_TOKEN_TTL_SECONDS} (a week), got ${JSON.stringify(ttl)}`)
      }
    }
    const secret = (env.TOKEN_SECRETS ?? '').split(',')[0].trim()
    if (secret === '') throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_MISSING, 'TOKEN_SECRETS (the coordinators\' secrets, comma separated; the first signs)')
    try {
      checkSecret(secret)
    } catch (err) {
      throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `TOKEN_SECRETS: its first secret is ${secret.length} characters; ${/** @type {Error} */ (err).message}`)
    }
    stdout.write(signJoinToken({ origin, visitor, ttlSeconds }, secret) + '\n')
    return 0
  } catch (err) {
    const { line, exit } = commandError('maygh-token', err)
    stderr.write(`${line}\n`)
    return exit
  }
}
