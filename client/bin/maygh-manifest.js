#!/usr/bin/env node
/**
 * maygh-manifest DIR [--prefix /] [--out FILE]
 * Writes the manifest (URL path → SHA-256, size, type) of the static assets
 * under DIR, and the piece lists of the large ones beside it
 * (client/manifest-cli.js; `--help` says which files are left out).
 */
import { manifestMain } from '../manifest-cli.js'

process.exitCode = await manifestMain(process.argv.slice(2), process)
