// Prosody (Debian's 0.12) for the send benchmark: a configuration of its own in a temporary
// directory, its MUC rooms archived by mod_muc_mam through mod_storage_sql on SQLite (LuaDBI),
// run in the foreground as a child process on a loopback port (not as the system service).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';

import { freePort, startProcess } from '../lib/proc.js';

import { listening } from './ejabberd.js';
import type { Peer } from './peer.js';

const PROSODY = '/usr/bin/prosody';
const LUA_DBI_SQLITE = '/usr/lib/x86_64-linux-gnu/lua/5.4/dbd/sqlite3.so';

/** Why Prosody cannot run here (a package missing), or null. */
export function prosodyMissing(): string | null {
  if (!fs.existsSync(PROSODY)) return 'the prosody package is not installed';
  if (!fs.existsSync(LUA_DBI_SQLITE)) {
    return 'the lua-dbi-sqlite3 package (Prosody’s SQLite storage) is not installed';
  }
  return null;
}

export async function startProsody(): Promise<Peer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-prosody-'));
  const port = await freePort();
  const database = path.join(dir, 'prosody.sqlite');
  // No rate limits are loaded (mod_limits is off unless named); in-band registration from
  // loopback is not throttled (its default allowlist). Rooms are unlocked on creation and every
  // room's messages are archived. SQLite runs with the driver's defaults: a rollback journal
  // with synchronous=FULL, every append its own transaction.
  const config = `
run_as_root = true
pidfile = "${dir}/prosody.pid"
data_path = "${dir}"
log = { warn = "*stderr" }
daemonize = false
c2s_ports = { ${port} }
c2s_interfaces = { "127.0.0.1" }
s2s_ports = { }
component_ports = { }
http_ports = { }
https_ports = { }
c2s_require_encryption = false
allow_unencrypted_plain_auth = true
allow_registration = true
authentication = "internal_hashed"
storage = "sql"
sql = { driver = "SQLite3", database = "${database}" }
modules_enabled = { "roster", "saslauth", "disco", "register", "ping" }
modules_disabled = { "s2s", "tls", "posix" }

VirtualHost "localhost"

Component "conference.localhost" "muc"
  modules_enabled = { "muc_mam" }
  muc_room_locking = false
  muc_log_all_rooms = true
  muc_log_by_default = true
  restrict_room_creation = false
`;
  fs.writeFileSync(path.join(dir, 'prosody.cfg.lua'), config);
  const proc = await startProcess(
    PROSODY,
    ['-F', '--config', path.join(dir, 'prosody.cfg.lua')],
    { PATH: process.env.PATH ?? '', HOME: dir },
    () => listening(port),
  );
  return {
    name: 'Prosody 0.12, mod_muc_mam on SQLite',
    port,
    domain: 'localhost',
    mucDomain: 'conference.localhost',
    pid: proc.pid,
    usesPostgres: false,
    archived: async () => {
      const db = new Database(database, { readonly: true, fileMustExist: true });
      try {
        const row = db
          .prepare(
            `select count(*) as n from prosodyarchive where store = 'muc_log' and "with" = 'message<groupchat'`,
          )
          .get() as { n: number };
        return row.n;
      } finally {
        db.close();
      }
    },
    stop: async () => {
      await proc.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
