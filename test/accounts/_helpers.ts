import { expect } from 'vitest';

import type { GqlResponse } from '../_util/app.js';

/** The error code of the first error, asserting there is one. */
export function codeOf(res: GqlResponse): string | undefined {
  expect(res.body.errors, JSON.stringify(res.body)).toBeDefined();
  return res.body.errors?.[0]?.extensions?.code as string | undefined;
}

/** Asserts the request failed with `code` (and never with INTERNAL). */
export function expectCode(res: GqlResponse, code: string): void {
  expect(codeOf(res), JSON.stringify(res.body.errors)).toBe(code);
}

/** Asserts success and returns data. */
export function ok(res: GqlResponse): Record<string, any> {
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data!;
}

export const SIGNUP = `mutation Signup($input: SignupWithInviteInput!) {
  signupWithInvite(input: $input) { csrfToken serverId expiresAt user { id username email displayName } }
}`;

export const CREATE_INVITE = `mutation Invite($email: String, $days: Int, $uses: Int) {
  createInstanceInvite(email: $email, expiresInDays: $days, maxUses: $uses) {
    token invite { id email maxUses uses expiresAt createdBy revokedAt }
  }
}`;

export const CHALLENGE = '{ registrationChallenge { challengeId salt bits expiresAt } }';

export const PASSWORD = 'correct horse battery staple';
