#!/usr/bin/env node
import { run } from './main.js'

/**
 * The `middy-idempotency` bin. The progress line of a long `list` goes to stderr only when it is
 * a terminal: it is rewritten in place (`\r`), which means nothing in a log file or a CI job.
 */
const progress = process.stderr.isTTY
  ? (text: string): void => { process.stderr.write(`\r\u001b[2K${text}`) }
  : undefined

void run(process.argv.slice(2), {
  out: (text) => { process.stdout.write(`${text}\n`) },
  err: (text) => { process.stderr.write(`${text}\n`) },
  ...(progress === undefined ? {} : { progress })
}).then((code) => { process.exitCode = code })
