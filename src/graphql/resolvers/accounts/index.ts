import type { Resolvers } from '../../resolver-types.js';

import { changePassword } from './change-password.js';
import { createInstanceInvite } from './create-instance-invite.js';
import { InstanceInvite } from './instance-invite-type.js';
import { instanceInvites } from './instance-invites.js';
import { login } from './login.js';
import { logoutOtherSessions } from './logout-other-sessions.js';
import { logout } from './logout.js';
import { me } from './me.js';
import { mySessions } from './my-sessions.js';
import { registrationChallenge } from './registration-challenge.js';
import { requestPasswordReset } from './request-password-reset.js';
import { resetPassword } from './reset-password.js';
import { revokeInstanceInvite } from './revoke-instance-invite.js';
import { revokeSession } from './revoke-session.js';
import { Session } from './session-type.js';
import { signupWithInvite } from './signup-with-invite.js';
import { updateProfile } from './update-profile.js';
import { User } from './user.js';

export const accountResolvers: Resolvers = {
  Query: { me, mySessions, registrationChallenge, instanceInvites },
  Mutation: {
    login,
    logout,
    signupWithInvite,
    logoutOtherSessions,
    revokeSession,
    requestPasswordReset,
    resetPassword,
    changePassword,
    updateProfile,
    createInstanceInvite,
    revokeInstanceInvite,
  },
  User,
  InstanceInvite,
  Session,
};
