// The smallest XMPP client the send benchmark needs against ejabberd and Prosody: a stream over
// plain TCP on loopback, in-band registration (XEP-0077), SASL PLAIN, resource binding, joining a
// MUC room (XEP-0045) and groupchat messages acknowledged by the room's reflection.
import net from 'node:net';

import { Parser } from 'htmlparser2';

export interface Stanza {
  name: string;
  attrs: Record<string, string>;
  children: Stanza[];
  text: string;
}

const NS_SASL = 'urn:ietf:params:xml:ns:xmpp-sasl';
const NS_MUC = 'http://jabber.org/protocol/muc';
const NS_STANZA_ID = 'urn:xmpp:sid:0';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const child = (s: Stanza, name: string, xmlns?: string) =>
  s.children.find((c) => c.name === name && (xmlns === undefined || c.attrs.xmlns === xmlns));

/** One client-to-server stream: top-level stanzas go to whoever waits for them. */
export class XmppClient {
  private parser!: Parser;
  private stack: Stanza[] = [];
  private waiters: Array<{ match: (s: Stanza) => boolean; resolve: (s: Stanza) => void }> = [];
  private closed: Error | null = null;
  private seq = 0;
  private jid = '';

  private constructor(
    private readonly socket: net.Socket,
    readonly domain: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.parser.write(chunk.toString('utf8')));
    const fail = (err: Error) => {
      this.closed = err;
      for (const w of this.waiters.splice(0))
        w.resolve({ name: 'closed', attrs: {}, children: [], text: err.message });
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('stream closed')));
  }

  static async connect(port: number, domain: string): Promise<XmppClient> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new XmppClient(socket, domain);
    await client.openStream();
    return client;
  }

  /** Opens (or, after SASL, restarts) the stream and waits for its features. */
  private async openStream(): Promise<Stanza> {
    this.stack = [];
    this.parser = new Parser(
      {
        onopentag: (name, attrs) => {
          if (name === 'stream:stream') return;
          this.stack.push({ name, attrs, children: [], text: '' });
        },
        ontext: (text) => {
          const top = this.stack[this.stack.length - 1];
          if (top) top.text += text;
        },
        onclosetag: (name) => {
          if (name === 'stream:stream') return this.socket.end();
          const el = this.stack.pop() as Stanza;
          const parent = this.stack[this.stack.length - 1];
          if (parent) parent.children.push(el);
          else this.dispatch(el);
        },
      },
      { xmlMode: true },
    );
    const features = this.next((s) => s.name === 'stream:features');
    this.write(
      `<?xml version='1.0'?><stream:stream to='${this.domain}' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`,
    );
    return features;
  }

  private dispatch(s: Stanza) {
    const i = this.waiters.findIndex((w) => w.match(s));
    if (i >= 0) this.waiters.splice(i, 1)[0]?.resolve(s);
  }

  private write(xml: string) {
    if (this.closed) throw this.closed;
    this.socket.write(xml);
  }

  /** The next top-level stanza that matches (a closed stream answers a stanza named `closed`). */
  next(match: (s: Stanza) => boolean): Promise<Stanza> {
    return new Promise((resolve) => {
      if (this.closed)
        resolve({ name: 'closed', attrs: {}, children: [], text: this.closed.message });
      else this.waiters.push({ match, resolve });
    });
  }

  private async iq(type: 'get' | 'set', body: string, to?: string): Promise<Stanza> {
    const id = `iq${this.seq++}`;
    const answer = this.next((s) => s.name === 'iq' && s.attrs.id === id);
    this.write(`<iq type='${type}' id='${id}'${to ? ` to='${to}'` : ''}>${body}</iq>`);
    const res = await answer;
    if (res.attrs.type !== 'result') throw new Error(`iq ${type} refused: ${describe(res)}`);
    return res;
  }

  /** In-band registration; an account that exists already (a second run) is fine. */
  async register(user: string, password: string): Promise<void> {
    await this.iq(
      'set',
      `<query xmlns='jabber:iq:register'><username>${escape(user)}</username><password>${escape(password)}</password></query>`,
    ).catch((err: Error) => {
      if (!/conflict/.test(err.message)) throw err;
    });
  }

  /** SASL PLAIN, the stream restart, and a bound resource. */
  async login(user: string, password: string): Promise<string> {
    const done = this.next((s) => s.attrs.xmlns === NS_SASL);
    const token = Buffer.from(`\0${user}\0${password}`).toString('base64');
    this.write(`<auth xmlns='${NS_SASL}' mechanism='PLAIN'>${token}</auth>`);
    const outcome = await done;
    if (outcome.name !== 'success') throw new Error(`SASL PLAIN refused: ${describe(outcome)}`);
    const features = await this.openStream();
    const bound = await this.iq(
      'set',
      `<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>bench</resource></bind>`,
    );
    this.jid = child(child(bound, 'bind') as Stanza, 'jid')?.text ?? '';
    // RFC 3921's session establishment, where a server still offers it as required.
    const session = child(features, 'session');
    if (session && !child(session, 'optional')) {
      await this.iq('set', `<session xmlns='urn:ietf:params:xml:ns:xmpp-session'/>`);
    }
    return this.jid;
  }

  /** Joins (creating it if new) a room as `nick`, without its history. */
  async join(room: string, nick: string): Promise<void> {
    const self = this.next(
      (s) =>
        s.name === 'presence' &&
        s.attrs.from === `${room}/${nick}` &&
        (s.attrs.type === 'error' ||
          (child(s, 'x', `${NS_MUC}#user`)?.children ?? []).some(
            (c) => c.name === 'status' && c.attrs.code === '110',
          )),
    );
    this.write(
      `<presence to='${room}/${nick}'><x xmlns='${NS_MUC}'><history maxstanzas='0'/></x></presence>`,
    );
    const presence = await self;
    if (presence.attrs.type === 'error') throw new Error(`join refused: ${describe(presence)}`);
  }

  /**
   * Sends a groupchat message and resolves when the room reflects it to its sender (the same
   * id back from `room/nick`); `archived` says whether the reflection carries the archive's
   * stanza id, which both servers add only after the archive write succeeded.
   */
  async groupchat(room: string, nick: string, text: string): Promise<{ archived: boolean }> {
    const id = `m${this.seq++}`;
    const echo = this.next(
      (s) => s.name === 'message' && s.attrs.id === id && s.attrs.from?.startsWith(room) === true,
    );
    this.write(
      `<message to='${room}' type='groupchat' id='${id}'><body>${escape(text)}</body></message>`,
    );
    const reflected = await echo;
    if (reflected.name !== 'message' || reflected.attrs.type === 'error') {
      throw new Error(`message refused: ${describe(reflected)}`);
    }
    if (reflected.attrs.from !== `${room}/${nick}`)
      throw new Error(`reflected from ${reflected.attrs.from}`);
    const sid = child(reflected, 'stanza-id', NS_STANZA_ID);
    return { archived: sid?.attrs.by === room };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end('</stream:stream>');
      setTimeout(() => {
        this.socket.destroy();
        resolve();
      }, 2000).unref();
    });
  }
}

function describe(s: Stanza): string {
  const err = child(s, 'error') ?? child(s, 'failure') ?? s;
  return `${s.name} ${JSON.stringify(s.attrs)} ${err.children.map((c) => c.name).join(', ')} ${s.text}`.trim();
}
