/**
 * `maygh-coordinator --help`: every flag with its environment variable,
 * default and meaning, generated from the flag table (cli-options.js), the
 * defaults (config.js) and one description per option, so the help cannot
 * drift from what the coordinator reads.
 */
import { OPTIONS } from './cli-options.js'
import { DEFAULTS } from './config.js'

const INDENT = '        '

/**
 * Whether the command line asks for help (`--help` or `-h` before any `--`).
 * @param {string[]} argv the arguments after the script
 * @returns {boolean}
 */
export function wantsHelp (argv) {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h')
}

/**
 * @param {Readonly<Record<string, string>>} descriptions option → one-line meaning, for every option in DEFAULTS
 * @param {object} [tables] the tables to describe (tests pass their own)
 * @param {Readonly<Record<string, readonly [string, string, (text: string) => unknown]>>} [tables.options] flag → [option, env var, parse]
 * @param {Readonly<Record<string, unknown>>} [tables.defaults] option → default
 * @param {number} [tables.width] wrap descriptions at this many columns
 * @returns {string} the help, ending in a newline
 * @throws {TypeError} when an option has no description, a description names no
 *   option, or a flag sets an option that does not exist
 */
export function helpText (descriptions, { options = OPTIONS, defaults = DEFAULTS, width = 80 } = {}) {
  const missing = Object.keys(defaults).filter((option) => typeof descriptions[option] !== 'string' || descriptions[option] === '')
  const stale = Object.keys(descriptions).filter((option) => !Object.hasOwn(defaults, option))
  const unknown = Object.values(options).map(([option]) => option).filter((option) => !Object.hasOwn(defaults, option))
  if (missing.length > 0) throw new TypeError(`no description for option(s) ${missing.join(', ')}`)
  if (stale.length > 0) throw new TypeError(`description(s) for unknown option(s) ${stale.join(', ')}`)
  if (unknown.length > 0) throw new TypeError(`flag(s) for unknown option(s) ${unknown.join(', ')}`)

  const lines = [
    'Usage: maygh-coordinator [--option value]…',
    '',
    ...wrap('Runs one Maygh coordinator shard. Each option comes from its flag, else its environment variable, else its default (README.md, "Configuration").', '', width),
    '',
    ...wrap('A flag\'s value is the next argument (`--port 7070`) or follows "=" (`--port=7070`); a negative number may be the next argument (`--stun-port -1`), any other value that starts with "-" takes "=". <n> is a whole number; true/false values also take 1/0, yes/no, on/off; lists are comma separated. An empty environment variable counts as unset.', '', width),
    '',
    ...wrap('SIGTERM drains: clients are moved to other coordinators over --drain-window-ms, then the process exits 0. SIGINT, or a second signal, stops at once. Logs are JSON lines on stdout.', '', width),
    '',
    ...wrap('A bad flag or value prints "maygh-coordinator: CODE: message" on stderr, naming the flag or environment variable, and exits with status 2 (codes: README.md, "Error codes"); a failure to start (a port in use, …) exits with status 1.', '', width),
    '',
    'Options:'
  ]
  const flagged = new Set()
  for (const [flag, [option, envVar, parse]] of Object.entries(options)) {
    flagged.add(option)
    lines.push(`  --${flag} ${parse === Number ? '<n>' : '<value>'}  (${envVar}; default ${shown(defaults[option])})`)
    lines.push(...wrap(descriptions[option], INDENT, width))
  }
  lines.push('  -h, --help', `${INDENT}print this help and exit`)

  const unflagged = Object.keys(defaults).filter((option) => !flagged.has(option))
  if (unflagged.length > 0) {
    lines.push('', ...wrap('Options without a flag or env var (startCoordinator() only):', '', width))
    for (const option of unflagged) {
      lines.push(`  ${option}  (default ${shown(defaults[option])})`)
      lines.push(...wrap(descriptions[option], INDENT, width))
    }
  }
  return lines.join('\n') + '\n'
}

/**
 * @param {unknown} value a default
 * @returns {string} how help shows it
 */
function shown (value) {
  if (value === null || value === undefined) return 'none'
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/**
 * Greedy word wrap; a word longer than a line keeps a line of its own.
 * @param {string} text
 * @param {string} indent put before every line
 * @param {number} width
 * @returns {string[]}
 */
function wrap (text, indent, width) {
  const lines = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  if (line !== '') lines.push(indent + line)
  return lines
}
