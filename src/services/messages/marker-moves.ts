/** A read marker's place: the message's `(createdAt, id)`. */
export interface MarkerPlace {
  at: number;
  id: string;
}

/**
 * Whether moving a marker now at (`lastReadAt`, `lastReadMessageId`), as read in this request,
 * to `to` could change it. False only where the database's own rule (forward only: a later
 * `createdAt`, or the same one and a greater id) would certainly leave it: the marker is already
 * past `to`, or at it. Markers only move forward while the membership lasts (a new membership
 * starts without one), and the row was read by this request, so the answer holds whatever
 * other requests did since. Where it is not certain (a tie on `createdAt` between two messages)
 * the database decides.
 */
export function markerMayMove(
  lastReadAt: number | null,
  lastReadMessageId: string | null,
  to: MarkerPlace,
): boolean {
  if (lastReadAt === null) return true;
  const at = Number(lastReadAt);
  if (at > to.at) return false;
  return !(at === to.at && lastReadMessageId === to.id);
}

const after = (a: MarkerPlace, b: MarkerPlace) => a.at > b.at || (a.at === b.at && a.id > b.id);

interface Move {
  to: MarkerPlace;
  done: Promise<void>;
  /** The furthest place asked for while this move was under way: one write for all of them. */
  next: {
    to: MarkerPlace;
    write: () => Promise<unknown>;
    done: Promise<void>;
    resolve: () => void;
    reject: (err: unknown) => void;
  } | null;
}

/**
 * One write at a time per person and conversation. A `markRead` that arrives while the same
 * person's move of the same marker is under way does not write beside it: if the move under way
 * goes as far, it answers with it; if not, it waits for it and then the furthest place asked
 * meanwhile is written once, for every request that asked. Each request is still answered only
 * after a write that covers it has committed (and on SQLite reached the disk), and the event
 * announces the place the marker moved to; a client whose requests overlap sees its last place
 * (the one the marker ends at), as if the requests had arrived in the other order.
 */
export class MarkerMoves {
  private readonly moving = new Map<string, Move>();
  /** Requests answered by another request's write so far (tests and metrics). */
  joined = 0;

  /** Markers with a move under way. */
  get underWay(): number {
    return this.moving.size;
  }

  /** Runs `write` (the move to `to`), or joins a move of the same marker under way. */
  move(key: string, to: MarkerPlace, write: () => Promise<unknown>): Promise<void> {
    const current = this.moving.get(key);
    if (!current) return this.start(key, to, write);
    this.joined += 1;
    if (!after(to, current.to)) return current.done;
    if (current.next) {
      if (after(to, current.next.to)) {
        current.next.to = to;
        current.next.write = write;
      }
      return current.next.done;
    }
    let resolve: () => void = () => {};
    let reject: (err: unknown) => void = () => {};
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    current.next = { to, write, done, resolve, reject };
    return done;
  }

  private start(key: string, to: MarkerPlace, write: () => Promise<unknown>): Promise<void> {
    const move: Move = { to, next: null, done: Promise.resolve() };
    this.moving.set(key, move);
    move.done = write().then(
      () => this.handOver(key, move),
      (err: unknown) => {
        this.handOver(key, move);
        throw err;
      },
    );
    return move.done;
  }

  /** The move ended: the one asked for meanwhile starts, or the marker has no move under way. */
  private handOver(key: string, move: Move): void {
    const next = move.next;
    if (!next) {
      this.moving.delete(key);
      return;
    }
    this.start(key, next.to, next.write).then(next.resolve, next.reject);
  }
}
