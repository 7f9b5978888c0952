import type { Resolver } from '../../resolver-types.js';

export const API_VERSION = 1;

/** serverInfo: read without a session, straight from the configuration. */
export const serverInfo: Resolver = (_parent, _args, { config, version }) => {
  return {
    version,
    apiVersion: API_VERSION,
    features: config.features.map((f) => ({
      key: f.key,
      state: f.state.toUpperCase(),
      reason: f.reason,
    })),
    auditRetentionDays: config.instance.auditRetentionDays,
    instanceNotice: config.instance.notice,
    termsUrl: config.instance.termsUrl,
    limits: config.limits,
    signupRequiresKeys: config.registration.signupRequiresKeys,
    openRegistration: config.registration.open,
    registrationPowBits: config.registration.powBits,
    dmInbound: config.dm.inbound.toUpperCase(),
    dmOutbound: config.dm.outbound.toUpperCase(),
    dmPartners: config.dm.partners.toUpperCase(),
    defaultWorkspace: config.instance.defaultWorkspace,
  };
};
