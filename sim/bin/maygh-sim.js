#!/usr/bin/env node
/**
 * maygh-sim: replays an access log (or a synthetic Etsy-like week) through the
 * Maygh model and reports how many bytes visitors' browsers would have served.
 * See docs/simulator.md.
 */
import { main } from '../src/cli.js'

process.exitCode = await main(process.argv.slice(2))
