/**
 * Command-line arguments, checked one way by every command (maygh-coordinator,
 * maygh-token, maygh-manifest, maygh-sim). Each splits its argv with node:util
 * `parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true })`
 * and hands the tokens to readArgs(), which refuses, with a registry code and
 * the flag as it was typed, what parseArgs' strict mode refuses: an unknown
 * flag, a flag without its value, a value given to a switch, an argument the
 * command does not take. Unlike strict mode it takes a negative number as the
 * value of the flag before it (`--stun-port -1`; strict mode calls that
 * ambiguous and wants `--stun-port=-1`). flagHelp() lays out a flag table's
 * help; commandError() turns what a command stopped on into the line it
 * prints and its exit status.
 *
 * Plain ESM with no Node-only import, like all of protocol/ (which the browser
 * bundle draws from, though not from this file): parseArgs stays in each command.
 */
import { CLI_ERRORS, MayghError } from './errors.js'

/** A value that may follow its flag although it starts with "-". */
const NEGATIVE_NUMBER = /^-\.?\d/

/**
 * A token of `parseArgs({ tokens: true })`.
 * @typedef {{ kind: 'option', name: string, rawName: string, value?: string, inlineValue?: boolean }
 *   | { kind: 'positional', value: string } | { kind: 'option-terminator' }} ArgToken
 */

/**
 * A flag as parseArgs takes it; `arg` (what its value is, as help shows it)
 * and `help` (what it does) are for flagHelp(), parseArgs passes them over.
 * @typedef {{ type: 'string' | 'boolean', multiple?: boolean, short?: string, arg?: string, help?: string }} FlagSpec
 */

/**
 * The values of the flags given, and the positional arguments; throws at the
 * first token that is wrong.
 * @param {readonly ArgToken[]} tokens
 * @param {Readonly<Record<string, FlagSpec>>} flags the command's flags, as given to parseArgs
 * @param {object} [how]
 * @param {number} [how.positionals] most positional arguments the command takes (default 0)
 * @param {import('./errors.js').ErrorSpec} [how.code] the error thrown (default
 *   MGH_CLI_ERR_BAD_FLAG; maygh-sim throws its own)
 * @returns {{ values: Record<string, string | boolean | string[]>, positionals: string[] }}
 *   a string flag given twice keeps the last, unless it is `multiple`
 * @throws {MayghError}
 */
export function readArgs (tokens, flags, { positionals: most = 0, code = CLI_ERRORS.MGH_CLI_ERR_BAD_FLAG } = {}) {
  /** @type {Record<string, string | boolean | string[]>} */
  const values = {}
  /** @type {string[]} */
  const positionals = []
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue
    if (token.kind === 'positional') {
      if (positionals.length >= most) {
        throw new MayghError(code, `unexpected argument ${JSON.stringify(token.value)} (${most === 0 ? 'it takes flags only' : `it takes ${most} argument${most === 1 ? '' : 's'} besides its flags`})`)
      }
      positionals.push(token.value)
      continue
    }
    const flag = token.rawName
    const spec = Object.hasOwn(flags, token.name) ? flags[token.name] : undefined
    if (spec === undefined) throw new MayghError(code, `${flag} is not a flag of this command (--help lists them)`)
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw new MayghError(code, `${flag} takes no value, got ${flag}=${token.value}`)
      values[token.name] = true
      continue
    }
    const value = token.value
    if (value === undefined) throw new MayghError(code, `${flag} needs a value`)
    if (!token.inlineValue && value.length > 1 && value.startsWith('-') && !NEGATIVE_NUMBER.test(value)) {
      throw new MayghError(code, `${flag} needs a value, got the flag ${value} (a value that starts with "-" is written ${flag}=VALUE)`)
    }
    if (spec.multiple) {
      const list = values[token.name]
      values[token.name] = Array.isArray(list) ? [...list, value] : [value]
    } else {
      values[token.name] = value
    }
  }
  return { values, positionals }
}

/**
 * The help of every flag of a table, one after the other: the flag (with its
 * short form and its value), then what it does, indented and wrapped.
 * @param {Readonly<Record<string, FlagSpec>>} flags
 * @param {number} [width] columns to wrap at
 * @returns {string[]} lines
 * @throws {TypeError} when a flag has no help, or a string flag no `arg`
 */
export function flagHelp (flags, width = 80) {
  const lines = []
  for (const [name, spec] of Object.entries(flags)) {
    if (!spec.help || (spec.type === 'string' && !spec.arg)) throw new TypeError(`flag --${name} has no help${spec.help ? ' for its value' : ''}`)
    lines.push(`  ${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.arg}` : ''}`)
    let line = ''
    for (const word of spec.help.split(/\s+/).filter(Boolean)) {
      if (line !== '' && 8 + line.length + 1 + word.length > width) {
        lines.push(`        ${line}`)
        line = word
      } else {
        line = line === '' ? word : `${line} ${word}`
      }
    }
    if (line !== '') lines.push(`        ${line}`)
  }
  return lines
}

/**
 * What a command prints when it stops on an error, and its exit status. A
 * MayghError (bad input): `PROGRAM: CODE: message`, its code's exit status (2).
 * An error of the system (EADDRINUSE, EACCES …): `PROGRAM: CODE: message`,
 * the code once, status 1. Anything else is a bug: its stack, status 1.
 * @param {string} program
 * @param {unknown} err
 * @returns {{ line: string, exit: number }} the line, without its newline
 */
export function commandError (program, err) {
  if (err instanceof MayghError) return { line: `${program}: ${err.code}: ${err.message}`, exit: err.exit ?? 2 }
  const { code, message, stack } = /** @type {{ code?: unknown, message?: unknown, stack?: unknown }} */ (err ?? {})
  if (typeof code === 'string' && typeof message === 'string') {
    return { line: `${program}: ${message.includes(code) ? message : `${code}: ${message}`}`, exit: 1 }
  }
  return { line: `${program}: internal error (please report it): ${stack ?? String(err)}`, exit: 1 }
}
