/** A key prefix of its own for one test's Redis keys and channels (tests share one Redis). */
export function redisTestPrefix(): string {
  return `svctest:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}:`;
}
