import './production.js';

import { runCli } from './run.js';

// The `svc` binary: real stdio and environment.
const code = await runCli(process.argv.slice(2), {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  env: process.env,
  errIsTty: process.stderr.isTTY === true,
});
process.exitCode = code;
