// The registration area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { RegistrationService } from './registration-service.js';
export type { InstanceInviteView } from './registration-service.js';
export { SignupPolicy } from './signup-policy.js';
export type { SignupRequest } from './signup-policy.js';
