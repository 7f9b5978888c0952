/// <reference lib="dom" />
// A Web Push service on loopback for the browser tests (docs/web-client.md, "Web Push in the
// browser tests").
//
// Chromium's own push service is Google's (FCM), which a test may not reach. So the test stands
// in for it, end to end but for that hop:
// - `pushManager.subscribe` in the page answers a subscription to this service, with a P-256
//   key pair and auth secret the test made (an init script replaces the method; everything
//   else, the service worker, the permission, the app's calls, is the browser's own);
// - the server pushes to it as to any push service: encrypted (RFC 8291, aes128gcm) and signed
//   (VAPID). The server accepts an `http://127.0.0.1` endpoint only because the test starts it
//   with `SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS=true` (as the server's own push tests do); by default
//   it takes https endpoints on public addresses only;
// - the service decrypts each push as the browser would and hands the plaintext to the page's
//   service worker through the DevTools protocol (`ServiceWorker.deliverPushMessage`), which
//   fires its `push` event as a real push does.
import { createDecipheriv, createECDH, hkdfSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { BrowserContext, CDPSession, Page } from 'playwright-core';

export interface Push {
  path: string;
  vapid: string;
  payload: Record<string, unknown>;
}

export class LoopbackPushService {
  private readonly ecdh = createECDH('prime256v1');
  private readonly auth = randomBytes(16);
  readonly received: Push[] = [];
  private cdp: CDPSession | null = null;
  private registrationId: string | null = null;

  private constructor(
    private readonly server: http.Server,
    /** The app's origin, where pushes are delivered. */
    private readonly origin: string,
  ) {
    this.ecdh.generateKeys();
  }

  static async start(origin: string): Promise<LoopbackPushService> {
    let self: LoopbackPushService | null = null;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void self!.receive(req, Buffer.concat(chunks)).then(
          () => res.writeHead(201).end(),
          () => res.writeHead(400).end(),
        );
      });
    });
    self = new LoopbackPushService(server, origin);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/push/browser-1`;
  }

  /** The browser side of the subscription the page will get. */
  get keys(): { p256dh: string; auth: string } {
    return {
      p256dh: this.ecdh.getPublicKey().toString('base64url'),
      auth: this.auth.toString('base64url'),
    };
  }

  /**
   * Makes `pushManager.subscribe` in every page of the context answer this service's
   * subscription (kept in localStorage, as the browser keeps a real one), and counts
   * `Notification.requestPermission` calls in `window.__permissionAsks`.
   */
  async install(context: BrowserContext): Promise<void> {
    await context.addInitScript(
      ({ endpoint, keys }) => {
        const KEY = 'test-push-subscription';
        const w = window as unknown as { __permissionAsks: number };
        w.__permissionAsks = 0;
        const ask = Notification.requestPermission.bind(Notification);
        Notification.requestPermission = (() => {
          w.__permissionAsks++;
          return ask();
        }) as typeof Notification.requestPermission;
        const make = (): PushSubscription =>
          ({
            endpoint,
            expirationTime: null,
            options: { userVisibleOnly: true, applicationServerKey: null },
            getKey: () => null,
            toJSON: () => ({ endpoint, expirationTime: null, keys }),
            unsubscribe: async () => {
              localStorage.removeItem(KEY);
              localStorage.setItem('test-push-unsubscribed', 'yes');
              return true;
            },
          }) as unknown as PushSubscription;
        PushManager.prototype.subscribe = async function () {
          localStorage.setItem(KEY, 'yes');
          return make();
        };
        PushManager.prototype.getSubscription = async function () {
          return localStorage.getItem(KEY) ? make() : null;
        };
      },
      { endpoint: this.endpoint, keys: this.keys },
    );
  }

  /** Follows the page's service worker registrations, to deliver pushes to the active one. */
  async attach(page: Page): Promise<void> {
    this.cdp = await page.context().newCDPSession(page);
    this.cdp.on('ServiceWorker.workerVersionUpdated', (e) => {
      for (const v of e.versions) {
        if (v.status === 'activated') this.registrationId = v.registrationId;
      }
    });
    await this.cdp.send('ServiceWorker.enable');
  }

  private async receive(req: http.IncomingMessage, body: Buffer): Promise<void> {
    const payload = this.decrypt(body);
    this.received.push({ path: req.url ?? '', vapid: String(req.headers.authorization), payload });
    if (this.cdp && this.registrationId) {
      await this.cdp.send('ServiceWorker.deliverPushMessage', {
        origin: this.origin,
        registrationId: this.registrationId,
        data: JSON.stringify(payload),
      });
    }
  }

  /** RFC 8291 section 3.4 over RFC 8188: one record, padding delimiter 0x02. */
  private decrypt(body: Buffer): Record<string, unknown> {
    const salt = body.subarray(0, 16);
    const idlen = body[20]!;
    const asPublic = body.subarray(21, 21 + idlen);
    const record = body.subarray(21 + idlen);
    const uaPublic = this.ecdh.getPublicKey();
    const secret = this.ecdh.computeSecret(asPublic);
    const info = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
    const ikm = Buffer.from(hkdfSync('sha256', secret, this.auth, info, 32));
    const cek = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16),
    );
    const nonce = Buffer.from(
      hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12),
    );
    const d = createDecipheriv('aes-128-gcm', cek, nonce);
    d.setAuthTag(record.subarray(record.length - 16));
    const padded = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    if (padded[end] !== 2) throw new Error('not the last record');
    return JSON.parse(padded.subarray(0, end).toString('utf8')) as Record<string, unknown>;
  }

  async stop(): Promise<void> {
    await this.cdp?.detach().catch(() => undefined);
    await new Promise((r) => this.server.close(r));
  }
}
