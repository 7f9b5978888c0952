import type { Duplex } from 'node:stream';

/**
 * Coalesces socket writes: the first frame written to a socket in a turn of the event loop
 * corks it, and every corked socket is uncorked once that turn is over, so the frames one client
 * gets from a burst of events leave in one write system call instead of one each. Frames still go
 * out in order, within the same turn of the loop.
 */
export class WriteBatcher {
  private readonly corked = new Set<Duplex>();
  private scheduled = false;

  hold(socket: Duplex | undefined): void {
    if (!socket || this.corked.has(socket) || socket.destroyed) return;
    socket.cork();
    this.corked.add(socket);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  readonly flush = (): void => {
    this.scheduled = false;
    const sockets = [...this.corked];
    this.corked.clear();
    for (const socket of sockets) socket.uncork();
  };
}
