/** A chat server the send benchmark starts on loopback and drives over XMPP. */
export interface Peer {
  name: string;
  port: number;
  domain: string;
  mucDomain: string;
  /** The server's process, whose CPU a message costs. */
  pid: number;
  /** Its archive is on the machine's PostgreSQL, whose CPU counts too. */
  usesPostgres: boolean;
  /** Groupchat messages in the room archive, read from its database. */
  archived(): Promise<number>;
  stop(): Promise<void>;
}
