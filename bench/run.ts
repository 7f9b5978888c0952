// `npm run bench [-- <scenario>...] [--pg]`: builds the server, runs each scenario against it
// and its reference on loopback, prints a table and writes bench/results/<scenario>.json.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { printTable, writeResult, type ScenarioResult } from './lib/report.js';
import { activeUsers } from './scenarios/active-users.js';
import { cli } from './scenarios/cli.js';
import { connectStorm } from './scenarios/connect-storm.js';
import { dataScenario } from './scenarios/data.js';
import { fanoutBurst, fanoutLatency, fanoutManyChannels } from './scenarios/fanout.js';
import { files } from './scenarios/files.js';
import { graphqlHttp } from './scenarios/graphql-http.js';
import { idleConnections } from './scenarios/idle.js';
import { importScenario } from './scenarios/import.js';
import { instructions } from './scenarios/instructions.js';
import { multiprocess } from './scenarios/multiprocess.js';
import { notify } from './scenarios/notify.js';
import { previews } from './scenarios/previews.js';
import { redisOutage } from './scenarios/redis-outage.js';
import { search } from './scenarios/search.js';
import { send } from './scenarios/send.js';
import { sendPeers } from './scenarios/send-peers.js';
import { socketWrites } from './scenarios/socket-writes.js';
import { webClient } from './scenarios/web-client.js';

const scenarios: Record<string, (opts: { pg: boolean }) => Promise<ScenarioResult>> = {
  'fanout-latency': fanoutLatency,
  'fanout-burst': fanoutBurst,
  'fanout-many-channels': fanoutManyChannels,
  'idle-connections': idleConnections,
  'connect-storm': connectStorm,
  send,
  'send-peers': () => sendPeers(),
  search,
  'graphql-http': graphqlHttp,
  multiprocess: () => multiprocess(),
  'redis-outage': () => redisOutage(),
  'web-client': () => webClient(),
  previews,
  files,
  'active-users': activeUsers,
  notify,
  'socket-writes': socketWrites,
  instructions,
  cli,
  import: importScenario,
  data: dataScenario,
};

const args = process.argv.slice(2);
const pg = args.includes('--pg');
const chosen = args.filter((a) => !a.startsWith('--'));
for (const name of chosen) {
  if (!scenarios[name]) {
    console.error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(', ')}`);
    process.exit(2);
  }
}
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
if (!args.includes('--no-build')) {
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit' });
}

let failures = 0;
// Run only when named: active-users ramps for as long as the server holds (tens of minutes);
// socket-writes measures no svc code (a reference for the deliveries' cost); instructions runs
// the servers under valgrind (minutes, and valgrind must be installed).
const onRequest = new Set(['active-users', 'socket-writes', 'instructions']);
for (const name of chosen.length
  ? chosen
  : Object.keys(scenarios).filter((n) => !onRequest.has(n))) {
  const started = Date.now();
  try {
    const result = await (scenarios[name] as (o: { pg: boolean }) => Promise<ScenarioResult>)({
      pg,
    });
    printTable(result);
    console.log(
      `wrote ${path.relative(root, writeResult(result))} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  } catch (err) {
    failures++;
    console.error(`scenario ${name} failed: ${(err as Error).stack ?? String(err)}`);
  }
}
process.exitCode = failures ? 1 : 0;
