import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { AppError } from '../../errors.js';

// The workspace area's own pure rules; the write rules every area shares (timeouts, archived
// conversations) and `Membership` are Authz's (authz/write-rules.ts).

/** VALIDATION for what the direct space cannot be (`renamed`, `deleted`, ...). */
export function refuseDirect(workspaceId: string, what: string): void {
  if (workspaceId === DIRECT_SPACE_ID) {
    throw new AppError('VALIDATION', `the direct space cannot be ${what}`);
  }
}
