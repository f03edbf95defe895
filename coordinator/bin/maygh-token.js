#!/usr/bin/env node
/**
 * maygh-token: prints a join token (join-token.js) for a page of `--origin`,
 * signed with the first secret in TOKEN_SECRETS, the coordinators' own
 * variable, so one environment serves both. A site's backend would rather
 * call `signJoinToken` per page view; this is for scripts and trying it out.
 *
 *   TOKEN_SECRETS=… maygh-token --origin https://shop.example [--visitor ID] [--ttl SECONDS]
 */
import { parseArgs } from 'node:util'
import { DEFAULT_TOKEN_TTL_SECONDS, signJoinToken } from '../src/join-token.js'

const USAGE = `usage: TOKEN_SECRETS=secret[,older…] maygh-token --origin ORIGIN [--visitor ID] [--ttl SECONDS]

Prints a join token for pages of ORIGIN (scheme://host[:port]) that the
coordinators sharing TOKEN_SECRETS accept until it expires (--ttl, default
${DEFAULT_TOKEN_TTL_SECONDS} s). --visitor names the visitor (what quarantine remembers).
Put it in the page: <script src="/maygh.js" data-coordinator="…" data-token="TOKEN">.
`

function main () {
  let values
  try {
    values = parseArgs({
      options: { origin: { type: 'string' }, visitor: { type: 'string' }, ttl: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
    }).values
  } catch (err) {
    return fail(err.message)
  }
  if (values.help) {
    process.stdout.write(USAGE)
    return
  }
  if (values.origin === undefined) return fail('--origin is required')
  const secret = (process.env.TOKEN_SECRETS ?? '').split(',')[0].trim()
  if (secret === '') return fail('set TOKEN_SECRETS (the coordinators\' secrets; the first signs)')
  const ttlSeconds = values.ttl === undefined ? undefined : Number(values.ttl)
  try {
    process.stdout.write(signJoinToken({ origin: values.origin, visitor: values.visitor, ttlSeconds }, secret) + '\n')
  } catch (err) {
    fail(err.message)
  }
}

/** @param {string} message */
function fail (message) {
  process.stderr.write(`maygh-token: ${message}\n${USAGE}`)
  process.exitCode = 2
}

main()
