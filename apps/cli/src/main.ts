#!/usr/bin/env node
import { runCli } from './cli.js';
import { consoleOutput } from './output.js';

try {
  process.exitCode = await runCli(process.argv.slice(2), consoleOutput);
} catch (error) {
  // Every refusal carries a message that says what to do; the stack is for debugging Kairos itself.
  process.stderr.write(`kairos: ${(error as Error).message}\n`);
  if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${(error as Error).stack ?? ''}\n`);
  process.exitCode = 1;
}
