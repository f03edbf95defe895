#!/usr/bin/env node
// maygh-swarm: replay a slice of a real access log through the real system and the simulator (swarm/src/cli.js).
import { main } from '../src/cli.js'

const code = await main(process.argv.slice(2), { out: (s) => process.stdout.write(s + '\n'), err: (s) => process.stderr.write(s + '\n') })
process.exit(code)
