#!/usr/bin/env node
/**
 * @module bin — the `edgeop` command of the npm package (`npx edgeop init <dir>`): project
 * scaffolding, apart from the operator artifact (dist/edgeop.cjs), so none of it costs the artifact bytes.
 *
 * Built to dist/lib/bin.js; from there, as from src/cli/, the package root is two directories up.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { initCommand } from './init-command.ts'
import { defineCommand, runCli } from './run-cli.ts'

const packageRoot = fileURLToPath(new URL('../../', import.meta.url))
const { version } = JSON.parse(readFileSync(`${packageRoot}package.json`, 'utf8')) as { version: string }

void runCli({
  name: 'edgeop',
  description: `edgeop ${version}: start an operator project (the operator binary is dist/edgeop.cjs)`,
  commands: {
    init: initCommand({ packageRoot }),
    version: defineCommand({
      description: 'Print the version',
      flags: {},
      run: () => void process.stdout.write(`edgeop ${version}\n`),
    }),
  },
})
