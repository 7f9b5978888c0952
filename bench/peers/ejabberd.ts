// ejabberd (Debian's 23.01) for the send benchmark: a configuration of its own in a temporary
// directory, its MUC rooms archived by mod_mam in a PostgreSQL database the benchmark creates
// from the package's schema, run as a child process on a loopback port (not as the system service).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import pg from 'pg';

import { freePort, startProcess } from '../lib/proc.js';
import { PG_URL } from '../lib/svc.js';

import type { Peer } from './peer.js';

const ERL = '/usr/bin/erl';
const SCHEMA = '/usr/share/ejabberd/sql/pg.sql';
const DRIVER = '/usr/lib/erlang/lib';

/** Why ejabberd cannot run here (a package missing), or null. */
export function ejabberdMissing(): string | null {
  if (!fs.existsSync(ERL) || !fs.existsSync(SCHEMA)) return 'the ejabberd package is not installed';
  if (!fs.readdirSync(DRIVER).some((d) => d.startsWith('p1_pgsql-'))) {
    return 'the erlang-p1-pgsql package (ejabberd’s PostgreSQL driver) is not installed';
  }
  return null;
}

async function admin(database: string, sql: string): Promise<void> {
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function startEjabberd(): Promise<Peer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ejabberd-'));
  const database = `bench_ejabberd_${Date.now().toString(36)}`;
  const adminDb = new URL(PG_URL).pathname.slice(1) || 'postgres';
  await admin(adminDb, `create database ${database}`);
  await admin(database, fs.readFileSync(SCHEMA, 'utf8'));
  const port = await freePort();
  const pgUrl = new URL(PG_URL);
  // Every limit that would slow a sender down is left at its default, which sets none: no c2s
  // shaper, no MUC message interval. Rooms are persistent: a temporary room's archive is
  // deleted when its last occupant leaves (mod_mam's remove_room hook).
  const config = `hosts: [localhost]
loglevel: warning
log_rotate_count: 0
registration_timeout: infinity
listen:
  - port: ${port}
    ip: "127.0.0.1"
    module: ejabberd_c2s
    starttls: false
auth_method: internal
sql_type: pgsql
sql_server: "${pgUrl.hostname}"
sql_port: ${pgUrl.port || 5432}
sql_database: ${database}
sql_username: ${decodeURIComponent(pgUrl.username) || 'postgres'}
sql_password: "${decodeURIComponent(pgUrl.password)}"
acl:
  local:
    user_regexp: ""
access_rules:
  register:
    allow: all
  local:
    allow: local
modules:
  mod_register:
    access: register
    ip_access: all
  mod_muc:
    host: "conference.localhost"
    access_create: local
    default_room_options:
      mam: true
      persistent: true
  mod_mam:
    db_type: sql
    default: always
`;
  fs.writeFileSync(path.join(dir, 'ejabberd.yml'), config);
  const proc = await startProcess(
    ERL,
    // No Erlang distribution: the node needs no name, and no epmd is started or asked.
    [
      '+K',
      'true',
      '-noinput',
      '-start_epmd',
      'false',
      '-mnesia',
      'dir',
      `"${dir}/spool"`,
      '-s',
      'ejabberd',
    ],
    {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      EJABBERD_CONFIG_PATH: path.join(dir, 'ejabberd.yml'),
      EJABBERD_LOG_PATH: path.join(dir, 'ejabberd.log'),
      ERL_LIBS: '/usr/lib/x86_64-linux-gnu',
    },
    () => listening(port),
  );
  return {
    name: 'ejabberd 23.01, mod_mam on PostgreSQL',
    port,
    domain: 'localhost',
    mucDomain: 'conference.localhost',
    pid: proc.pid,
    usesPostgres: true,
    archived: async () => {
      const url = new URL(PG_URL);
      url.pathname = `/${database}`;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        const { rows } = await c.query<{ n: string }>(
          "select count(*) as n from archive where kind = 'groupchat'",
        );
        return Number(rows[0]?.n ?? 0);
      } finally {
        await c.end();
      }
    },
    stop: async () => {
      await proc.stop();
      await admin(adminDb, `drop database if exists ${database} with (force)`);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True once something accepts connections on the loopback port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
