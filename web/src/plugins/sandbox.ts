import { runnerSource, type FromRunner, type RunnerInit, type ToRunner } from './runner.ts';

// One plugin's code, running (docs/plugins.md, "Where plugin code runs"): a frame of
// /plugin-sandbox.html with `sandbox="allow-scripts"` and no same origin (so no cookies, storage
// or page of this origin), whose own policy allows no connections; in it, a worker runs the
// plugin. The page speaks to the worker over a MessageChannel and believes nothing it says
// without checking. Starting and each command have a time limit; past it the frame is removed,
// which ends the worker however busy it is, and the page never waited on it.

export const SANDBOX_PATH = '/plugin-sandbox.html';
/** How long a plugin may take to start, and to run one command. */
export const PLUGIN_TIME_LIMIT_MS = 5000;
const LIMIT_WORDS = `${PLUGIN_TIME_LIMIT_MS / 1000} seconds`;
/** The most messages one command may post. */
export const MAX_SENDS_PER_RUN = 5;
const MAX_REPLY = 2000;

/** A refusal to say in words (the plugin's, or the sandbox's rules). */
export class PluginError extends Error {}

/** Where a command runs: handed to the plugin's handler as its second argument. */
export interface RunPlace {
  command: string;
  serverId: string;
  conversationId: string | null;
}

export interface SandboxOptions {
  init: RunnerInit;
  /** Posts a message for the plugin's run at `place`; throws a refusal in words. */
  send: (channel: string | null, text: string, place: RunPlace) => Promise<void>;
}

interface Running {
  id: number;
  command: string;
  place: RunPlace;
  sends: number;
  resolve: (reply: string | null) => void;
  reject: (err: Error) => void;
}

export class PluginSandbox {
  private readonly frame: HTMLIFrameElement;
  private readonly port: MessagePort;
  private readonly started: Promise<void>;
  private running: Running | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextRun = 1;
  private stopped: Error | null = null;
  private onStop: ((err: Error) => void) | null = null;

  constructor(private readonly opts: SandboxOptions) {
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.frame = document.createElement('iframe');
    this.frame.setAttribute('sandbox', 'allow-scripts');
    this.frame.title = `Plugin ${opts.init.plugin.name} (runs out of sight)`;
    this.frame.hidden = true;
    this.frame.tabIndex = -1;
    this.frame.dataset['plugin'] = opts.init.plugin.id;
    this.started = new Promise<void>((resolve, reject) => {
      this.onStop = reject;
      const timer = setTimeout(
        () =>
          this.stop(
            new PluginError(
              `The ${opts.init.plugin.name} plugin was stopped: it took longer than ${LIMIT_WORDS} to start.`,
            ),
          ),
        PLUGIN_TIME_LIMIT_MS,
      );
      this.port.onmessage = (e: MessageEvent) => {
        const m = e.data as FromRunner;
        if (m?.type === 'ready') {
          clearTimeout(timer);
          resolve();
        } else if (m?.type === 'failed') {
          clearTimeout(timer);
          this.stop(
            new PluginError(
              `The ${opts.init.plugin.name} plugin could not start: ${clip(m.message)}.`,
            ),
          );
        } else {
          void this.heard(m);
        }
      };
    });
    this.started.catch(() => undefined);
    this.frame.addEventListener(
      'load',
      () => {
        // The frame's origin is opaque, so no origin can be named; the port is the only way back.
        this.frame.contentWindow?.postMessage({ runner: runnerSource, init: opts.init }, '*', [
          channel.port2,
        ]);
      },
      { once: true },
    );
    this.frame.src = SANDBOX_PATH;
    document.body.append(this.frame);
  }

  /** False once stopped, or once the frame is gone (removed at sign-out). */
  get alive(): boolean {
    return !this.stopped && this.frame.isConnected;
  }

  /** Runs one command of the plugin (one at a time); answers the reply it returned, if any. */
  invoke(args: Record<string, unknown>, place: RunPlace): Promise<string | null> {
    const next = this.queue.then(() => this.runOne(args, place));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runOne(args: Record<string, unknown>, place: RunPlace) {
    const command = place.command;
    if (this.stopped) throw this.stopped;
    await this.started;
    return new Promise<string | null>((resolve, reject) => {
      const id = this.nextRun++;
      const timer = setTimeout(
        () =>
          this.stop(
            new PluginError(
              `The ${this.opts.init.plugin.name} plugin was stopped: /${command} ran longer than ${LIMIT_WORDS}. It starts again from the beginning next time.`,
            ),
          ),
        PLUGIN_TIME_LIMIT_MS,
      );
      const end = () => {
        clearTimeout(timer);
        this.running = null;
      };
      this.running = {
        id,
        command,
        place,
        sends: 0,
        resolve: (r) => (end(), resolve(r)),
        reject: (e) => (end(), reject(e)),
      };
      this.tell({ type: 'invoke', id, command, args, context: { ...place } });
    });
  }

  /** A message from the worker, other than starting: checked against the run it belongs to. */
  private async heard(m: FromRunner): Promise<void> {
    const run = this.running;
    if (!m || typeof m !== 'object') return;
    if (m.type === 'done' && run && m.id === run.id) {
      run.resolve(typeof m.reply === 'string' ? m.reply.slice(0, MAX_REPLY) : null);
    } else if (m.type === 'error' && run && m.id === run.id) {
      run.reject(
        new PluginError(
          `/${run.command} failed in the ${this.opts.init.plugin.name} plugin: ${clip(m.message)}.`,
        ),
      );
    } else if (m.type === 'call' && typeof m.id === 'number') {
      const refuse = (error: string) => this.tell({ type: 'result', id: m.id, ok: false, error });
      if (m.method !== 'messages.send') return refuse('this app offers svc.messages.send only');
      if (!run) return refuse('a plugin posts only while one of its commands runs');
      if (typeof m.text !== 'string' || (m.channel !== null && typeof m.channel !== 'string')) {
        return refuse('svc.messages.send(channel, text) takes a channel name (or null) and text');
      }
      if (run.sends >= MAX_SENDS_PER_RUN) {
        return refuse(`a command may post at most ${MAX_SENDS_PER_RUN} messages`);
      }
      run.sends += 1;
      try {
        await this.opts.send(m.channel, m.text, run.place);
        this.tell({ type: 'result', id: m.id, ok: true });
      } catch (err) {
        refuse(err instanceof Error ? err.message : String(err));
      }
    }
  }

  private tell(m: ToRunner): void {
    if (!this.stopped) this.port.postMessage(m);
  }

  /** Ends the plugin: the frame goes, and its worker with it. */
  stop(reason: Error = new PluginError('The plugin was stopped.')): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.frame.remove();
    this.port.close();
    this.onStop?.(reason);
    this.running?.reject(reason);
  }
}

function clip(text: unknown): string {
  const s = String(text ?? '').trim();
  return (s.length > 300 ? `${s.slice(0, 300)}…` : s).replace(/[.\s]+$/, '') || 'no reason given';
}
