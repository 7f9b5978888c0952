// Preloaded into an svc process (NODE_OPTIONS=--import) by test/deploy/several-hosts.test.ts: the
// process's wall clock (Date) runs ahead or behind by the milliseconds written in the file
// SVC_TEST_CLOCK_OFFSET_FILE, read again every 20 ms, as it would on a host whose clock is off
// by that much. Monotonic time (performance.now, timers) is the host's own and stays as it is.
import fs from 'node:fs';

const file = process.env.SVC_TEST_CLOCK_OFFSET_FILE;
let offset = 0;
function read() {
  try {
    offset = Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch {
    // Kept: the file is being rewritten.
  }
}
read();
setInterval(read, 20).unref();

const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class HostDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + offset);
    else super(...args);
  }
  static now() {
    return realNow() + offset;
  }
}
globalThis.Date = HostDate;
