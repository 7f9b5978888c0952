// Row types of the event outbox (src/events/outbox.ts).

export interface EventOutboxTable {
  /** UUIDv7: rows of one writer sort in the order their events were raised. */
  id: string;
  topic: string;
  type: string;
  /** The event's own time (`BusEvent.at`). */
  at: number;
  /** The payload as JSON text. */
  payload: string;
  /**
   * The process that publishes the event itself after commit (a random id per process start),
   * or null when the writer cannot reach the listeners (the command line without Redis): the
   * servers' drainer delivers it at once.
   */
  origin: string | null;
  /** Wall-clock time of the write, milliseconds; the drainer's grace period counts from it. */
  createdAt: number;
}
