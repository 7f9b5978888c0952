// The accounts area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { AccountService } from './account-service.js';
export { toAccountView } from './account-view.js';
export type { AccountView } from './account-view.js';
export { AVATAR_MAX_BYTES, Avatars, avatarUrlOf } from './avatars.js';
export { newAccountRow } from './creation.js';
export { assertLocalAccount } from './local-account.js';
export { PasswordResetService, issueClaimTokens } from './password-reset.js';
export { UNCLAIMED_PASSWORD_HASH, hashPassword } from './passwords.js';
export { DISPLAY_NAME_MAX, normalizeDisplayName } from './profile.js';
export {
  ACCOUNT_COLUMNS,
  deletePasswordResetsOf,
  findAccountById,
  findAccountByUsernameKey,
  findLiveAccountByEmailKey,
  insertAccount,
  lockAccount,
  recordTermsAcceptance,
  scheduleDeletion,
  setAccountEmail,
  setAccountKeyIdentity,
  unscheduleDeletion,
  writeTombstone,
} from './queries.js';
export {
  USERNAME_MAX,
  checkPassword,
  lookupKey,
  normalizeEmail,
  normalizeUsername,
} from './username.js';
export { AccountViewCache } from './view-cache.js';
