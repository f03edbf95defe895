#!/usr/bin/env node
/**
 * maygh-token: prints a join token for pages of `--origin`, signed with the
 * first secret in TOKEN_SECRETS (coordinator/src/token-cli.js; `--help`).
 *
 *   TOKEN_SECRETS=… maygh-token --origin https://shop.example [--visitor ID] [--ttl SECONDS]
 */
import { tokenMain } from '../src/token-cli.js'

process.exitCode = tokenMain(process.argv.slice(2), process.env, process)
