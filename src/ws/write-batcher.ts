import type { Duplex } from 'node:stream';

/** How a busy process gathers each socket's frames over more than one turn of the loop. */
export interface WriteGathering {
  /** The longest a frame waits for others to the same socket, with the loop fully busy; 0 is off. */
  maxDelayMs: number;
  /** The event loop's utilization over the last whole window, 0 to 1 (`RequestLoad.sustained`). */
  load: () => number;
  /** Called with the delay each time a flush waits past its turn. */
  gathered?: (delayMs: number) => void;
}

/** The loop's utilization above which frames wait for others (the delay grows to 100%). */
export const GATHER_FROM = 0.8;

/**
 * Coalesces socket writes: the first frame written to a socket corks it, and every corked socket
 * is uncorked at the flush, so the frames one client gets in the meantime leave in one write
 * system call instead of one each. Frames still go out in order.
 *
 * The flush comes once the turn of the event loop is over while the process has room. Past
 * `GATHER_FROM` of the loop busy it comes later, up to `maxDelayMs` at 100%: a socket's write
 * costs the process (and the machine's network stack) about the same for one frame as for
 * several, so a saturated process that gathers a client's frames over tens of milliseconds
 * spends its time on more deliveries instead of more system calls (bench `socket-writes`:
 * two frames in one write cost a frame half as much as one). Deliveries wait only while the
 * process is that busy, when requests already queue behind one another; with room to spare they
 * leave in the same turn, as before.
 */
export class WriteBatcher {
  private readonly corked = new Set<Duplex>();
  private scheduled = false;

  constructor(private readonly gathering?: WriteGathering) {}

  hold(socket: Duplex | undefined): void {
    if (!socket || this.corked.has(socket) || socket.destroyed) return;
    socket.cork();
    this.corked.add(socket);
    if (!this.scheduled) {
      this.scheduled = true;
      const delay = this.delayMs();
      if (delay > 0) {
        setTimeout(this.flush, delay);
        this.gathering?.gathered?.(delay);
      } else {
        setImmediate(this.flush);
      }
    }
  }

  /** How long the next flush waits: 0 (the end of this turn) unless the loop is busy. */
  delayMs(): number {
    const gathering = this.gathering;
    if (!gathering || gathering.maxDelayMs <= 0) return 0;
    const busy = gathering.load();
    if (busy <= GATHER_FROM) return 0;
    const share = Math.min(1, (busy - GATHER_FROM) / (1 - GATHER_FROM));
    return Math.round(gathering.maxDelayMs * share);
  }

  /** Writes what `socket` holds now, before the flush (the next frame holds it again). */
  release(socket: Duplex): void {
    if (this.corked.delete(socket)) socket.uncork();
  }

  readonly flush = (): void => {
    this.scheduled = false;
    const sockets = [...this.corked];
    this.corked.clear();
    for (const socket of sockets) socket.uncork();
  };
}
