#!/usr/bin/env node
import { createInterface } from 'node:readline/promises'
import { run } from './main.js'

/**
 * The `middy-idempotency` bin. The progress line of a long `list` goes to stderr only when it is
 * a terminal: it is rewritten in place (`\r`), which means nothing in a log file or a CI job.
 */
const progress = process.stderr.isTTY
  ? (text: string): void => { process.stderr.write(`\r\u001b[2K${text}`) }
  : undefined

/**
 * A yes/no question, only when a person is there to answer it: stdin and stderr both terminals.
 * The question goes to stderr, so that stdout keeps only the command's answer (--json).
 */
const confirm = process.stdin.isTTY && process.stderr.isTTY
  ? async (question: string): Promise<boolean> => {
    const prompt = createInterface({ input: process.stdin, output: process.stderr })
    try {
      return /^y(es)?$/i.test((await prompt.question(question)).trim())
    } finally {
      prompt.close()
    }
  }
  : undefined

void run(process.argv.slice(2), {
  out: (text) => { process.stdout.write(`${text}\n`) },
  err: (text) => { process.stderr.write(`${text}\n`) },
  ...(progress === undefined ? {} : { progress }),
  ...(confirm === undefined ? {} : { confirm })
}).then(async (code) => {
  // Exit once the output is written, rather than when nothing is left open: a client the command
  // gave up on (a store that never answered) may still hold a socket (node-redis 6's destroy()
  // leaves one that is connecting), and would keep the process alive.
  const flushed = async (stream: NodeJS.WriteStream): Promise<unknown> =>
    await new Promise((resolve) => stream.write('', resolve))
  await Promise.all([flushed(process.stdout), flushed(process.stderr)])
  process.exit(code)
})
