import type {
  AccountTable,
  InstanceTable,
  IpBlockTable,
  ServerKeyTable,
  SessionTable,
} from './tables/foundation.js';

/** Every table, by name. Each area adds its tables in `tables/<area>.ts` and lists them here. */
export interface Database {
  instance: InstanceTable;
  server_key: ServerKeyTable;
  ip_block: IpBlockTable;
  account: AccountTable;
  session: SessionTable;
}
