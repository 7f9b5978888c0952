import type { QueryResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

export const API_VERSION = 1;

/** serverInfo: read without a session, straight from the configuration. */
export const serverInfo: QueryResolvers['serverInfo'] = (_parent, _args, { config, version }) => {
  return {
    version,
    apiVersion: API_VERSION,
    features: config.features.map((f) => ({
      key: f.key,
      state: enumName(f.state),
      reason: f.reason,
    })),
    auditRetentionDays: config.instance.auditRetentionDays,
    instanceNotice: config.instance.notice,
    termsUrl: config.instance.termsUrl,
    limits: config.limits,
    signupRequiresKeys: config.registration.signupRequiresKeys,
    openRegistration: config.registration.open,
    registrationPowBits: config.registration.powBits,
    dmInbound: enumName(config.dm.inbound),
    dmOutbound: enumName(config.dm.outbound),
    dmPartners: enumName(config.dm.partners),
    defaultWorkspace: config.instance.defaultWorkspace,
  };
};
