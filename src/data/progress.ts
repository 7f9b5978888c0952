// Progress of a long data command: on a terminal, one line redrawn at most five times a second
// (a bar when the total is known, with rows, files and bytes); elsewhere nothing until the
// summary line at the end, so a log or a cron mail gets one line, not thousands.

export interface ProgressCounts {
  /** What is being done now ("table message", "files"). */
  step: string;
  rows: number;
  files: number;
  bytes: number;
  /** Bytes expected in all, when known (for the bar). */
  totalBytes?: number;
}

export class Progress {
  private counts: ProgressCounts = { step: '', rows: 0, files: 0, bytes: 0 };
  private lastDraw = 0;
  private drawn = false;
  private readonly started = Date.now();

  constructor(
    private readonly what: string,
    private readonly write: (text: string) => void,
    private readonly terminal: boolean,
  ) {}

  update(change: Partial<ProgressCounts>): void {
    this.counts = { ...this.counts, ...change };
    if (!this.terminal) return;
    const now = Date.now();
    if (now - this.lastDraw < 200) return;
    this.lastDraw = now;
    this.draw();
  }

  add(change: { rows?: number; files?: number; bytes?: number }): void {
    this.update({
      rows: this.counts.rows + (change.rows ?? 0),
      files: this.counts.files + (change.files ?? 0),
      bytes: this.counts.bytes + (change.bytes ?? 0),
    });
  }

  /** Ends the line, then writes the summary line. */
  done(summary: string): void {
    if (this.terminal && this.drawn) this.write('\n');
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    this.write(`svc ${this.what}: ${summary} in ${seconds} s\n`);
  }

  private draw(): void {
    const c = this.counts;
    let bar = '';
    if (c.totalBytes && c.totalBytes > 0) {
      const share = Math.min(1, c.bytes / c.totalBytes);
      const filled = Math.round(share * 24);
      bar = `[${'#'.repeat(filled)}${'-'.repeat(24 - filled)}] ${Math.round(share * 100)
        .toString()
        .padStart(3)}% `;
    }
    const line = `${bar}${c.step}: ${count(c.rows)} rows, ${count(c.files)} files, ${bytes(c.bytes)}`;
    this.write(`\r${line.padEnd(100).slice(0, 100)}`);
    this.drawn = true;
  }
}

export const count = (n: number) => n.toLocaleString('en-US');

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
