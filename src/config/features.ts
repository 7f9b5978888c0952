/** The optional instance features, in the contract's fixed order. */
export const FEATURE_NAMES = [
  'attachments',
  'link_previews',
  'email',
  'custom_emoji',
  'workspace_plugins',
  'ai_commands',
] as const;

export type FeatureName = (typeof FEATURE_NAMES)[number];

export type FeatureStateName = 'enabled' | 'disabled' | 'unavailable';

export interface FeatureState {
  key: FeatureName;
  state: FeatureStateName;
  /** Set only when the state is `unavailable`. */
  reason: string | null;
}

export function isFeatureName(name: string): name is FeatureName {
  return (FEATURE_NAMES as readonly string[]).includes(name);
}

/**
 * Parses `SVC_FEATURES_DISABLED`: comma-separated, spaces around names ignored, empty items
 * skipped. Returns the unknown names apart so the caller can refuse boot naming them.
 */
export function parseDisabledFeatures(raw: string | undefined): {
  disabled: FeatureName[];
  unknown: string[];
} {
  const disabled: FeatureName[] = [];
  const unknown: string[] = [];
  for (const item of (raw ?? '').split(',')) {
    const name = item.trim();
    if (name === '') continue;
    if (isFeatureName(name)) {
      if (!disabled.includes(name)) disabled.push(name);
    } else if (!unknown.includes(name)) {
      unknown.push(name);
    }
  }
  return { disabled, unknown };
}

export const EMAIL_UNAVAILABLE_REASON = 'set SVC_SMTP_HOST and SVC_SMTP_FROM to send mail';

/** Works out every feature's state at boot. Disabled wins over unavailable. */
export function resolveFeatureStates(
  disabled: readonly FeatureName[],
  smtp: { host: string | null; from: string | null },
): FeatureState[] {
  return FEATURE_NAMES.map((key): FeatureState => {
    if (disabled.includes(key)) return { key, state: 'disabled', reason: null };
    if (key === 'email' && (smtp.host === null || smtp.from === null)) {
      return { key, state: 'unavailable', reason: EMAIL_UNAVAILABLE_REASON };
    }
    return { key, state: 'enabled', reason: null };
  });
}
