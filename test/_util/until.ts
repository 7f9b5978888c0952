// Waiting in tests, without the server's modules (test/realtime/_helpers.ts re-exports it).

/** Waits until `check` holds, polling; fails after `timeoutMs` with `what`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
