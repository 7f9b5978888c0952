// The code that runs in a plugin's worker, in the sandbox (docs/plugins.md, "Where plugin code
// runs"). The page sends its source (`runnerSource`), so it must stand alone: it names nothing
// outside its own body. It gives the plugin its `svc` object and speaks to the page over the one
// port it is handed; the page trusts none of what comes back (sandbox.ts checks every message).

/** What the page sends with the port: the plugin's entry file and what the plugin may read. */
export interface RunnerInit {
  code: string;
  plugin: { id: string; name: string; version: string };
  settings: Record<string, unknown>;
}

/** Page to worker. */
export type ToRunner =
  | { type: 'invoke'; id: number; command: string; args: Record<string, unknown>; context: unknown }
  | { type: 'result'; id: number; ok: boolean; error?: string };

/** Worker to page. */
export type FromRunner =
  | { type: 'ready'; commands: string[] }
  | { type: 'failed'; message: string }
  | { type: 'call'; id: number; method: 'messages.send'; channel: string | null; text: string }
  | { type: 'done'; id: number; reply: string | null }
  | { type: 'error'; id: number; message: string };

interface WorkerScope {
  onmessage: ((e: MessageEvent) => void) | null;
}

function pluginRunner(): void {
  const scope = self as unknown as WorkerScope;
  scope.onmessage = (first: MessageEvent) => {
    scope.onmessage = null;
    const init = first.data as RunnerInit;
    const port = first.ports[0]!;
    const handlers = new Map<string, (args: unknown, context: unknown) => unknown>();
    const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
    let nextCall = 1;
    const say = (m: FromRunner) => port.postMessage(m);
    const words = (err: unknown) =>
      String(err instanceof Error ? err.message : err).slice(0, 500) || 'no reason given';

    const svc = Object.freeze({
      plugin: Object.freeze({ ...init.plugin }),
      settings: Object.freeze({ ...init.settings }),
      commands: Object.freeze({
        register(name: unknown, handler: unknown): void {
          if (typeof name !== 'string' || typeof handler !== 'function') {
            throw new TypeError('svc.commands.register(name, handler) takes a name and a function');
          }
          handlers.set(name, handler as (args: unknown, context: unknown) => unknown);
        },
      }),
      messages: Object.freeze({
        send(channel: unknown, text: unknown): Promise<void> {
          const id = nextCall++;
          return new Promise<void>((resolve, reject) => {
            waiting.set(id, { resolve, reject });
            say({
              type: 'call',
              id,
              method: 'messages.send',
              channel: channel === null || channel === undefined ? null : String(channel),
              text: String(text),
            });
          });
        },
      }),
    });

    port.onmessage = (e: MessageEvent) => {
      const m = e.data as ToRunner;
      if (m.type === 'result') {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (w && m.ok) w.resolve();
        else if (w) w.reject(new Error(m.error ?? 'refused'));
        return;
      }
      const handler = handlers.get(m.command);
      if (!handler) {
        say({ type: 'error', id: m.id, message: `it registered no handler for /${m.command}` });
        return;
      }
      void (async () => {
        try {
          const out = (await handler(m.args, m.context)) as unknown;
          const reply =
            typeof out === 'string'
              ? out
              : out && typeof (out as { reply?: unknown }).reply === 'string'
                ? (out as { reply: string }).reply
                : null;
          say({ type: 'done', id: m.id, reply });
        } catch (err) {
          say({ type: 'error', id: m.id, message: words(err) });
        }
      })();
    };

    void (async () => {
      try {
        const url = URL.createObjectURL(new Blob([init.code], { type: 'text/javascript' }));
        const mod = (await import(/* @vite-ignore */ url)) as { activate?: unknown };
        if (typeof mod.activate !== 'function') {
          throw new Error('its entry file exports no activate(svc) function');
        }
        await (mod.activate as (s: typeof svc) => unknown)(svc);
        say({ type: 'ready', commands: [...handlers.keys()] });
      } catch (err) {
        say({ type: 'failed', message: words(err) });
      }
    })();
  };
}

/** The worker's script: the function above, called. */
export const runnerSource = `(${pluginRunner.toString()})();`;
