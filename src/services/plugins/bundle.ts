import { JsonRefusal, jsonPointer, parseBoundedJson } from './bounded-json.js';
import type { SETTING_TYPES } from './bundle-schema.js';
import { BUNDLE_FORMAT_VERSION, BUNDLE_SCHEMA, KNOWN_CAPABILITIES } from './bundle-schema.js';
import { validateAgainst } from './json-schema-subset.js';

// A bundle read and checked (docs/plugins.md): bounded parse, format version, the JSON Schema,
// then the rules a schema cannot say (known capabilities, unique names, references inside the
// bundle, base64, setting defaults).

/** A bundle the service refuses (422): the message says what and where. */
export class BundleRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleRefusal';
  }
}

export interface CommandArgument {
  name: string;
  type: string;
  description?: string;
  required?: boolean;
}

export interface BundleCommand {
  name: string;
  description: string;
  arguments?: CommandArgument[];
}

export interface BundleKeybind {
  keys: string;
  command: string;
  description?: string;
}

export type SettingType = (typeof SETTING_TYPES)[number];

export interface SettingSchema {
  type: SettingType;
  title?: string;
  description?: string;
  default?: string | number | boolean;
  enum?: (string | number)[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

export interface SettingsSchema {
  type: 'object';
  properties: Record<string, SettingSchema>;
  required?: string[];
}

/**
 * What the server keeps of a bundle besides its bytes: everything but the client code (stored
 * with the bundle's row, so the registry never reads blobs).
 */
export interface BundleManifest {
  id: string;
  name: string;
  version: string;
  description: string;
  author: { name: string; email?: string; url?: string };
  capabilities: string[];
  contributes: {
    commands?: BundleCommand[];
    keybinds?: BundleKeybind[];
    settings?: SettingsSchema;
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Reads a bundle's bytes; throws BundleRefusal with a reason a developer can act on. */
export function readBundle(bytes: Uint8Array): BundleManifest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BundleRefusal('the bundle is not UTF-8 text; a bundle is a JSON document');
  }
  let value: unknown;
  try {
    value = parseBoundedJson(text);
  } catch (err) {
    if (err instanceof JsonRefusal) throw new BundleRefusal(err.message);
    throw err;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BundleRefusal('the bundle must be a JSON object');
  }
  const version = (value as Record<string, unknown>).formatVersion;
  if (version !== BUNDLE_FORMAT_VERSION) {
    throw new BundleRefusal(
      version === undefined
        ? `/formatVersion is missing: this server reads bundles of format ${BUNDLE_FORMAT_VERSION}`
        : `/formatVersion is ${JSON.stringify(version)}: this server reads bundles of format ${BUNDLE_FORMAT_VERSION} only`,
    );
  }
  const violations = validateAgainst(value, BUNDLE_SCHEMA, 5);
  if (violations.length > 0) {
    throw new BundleRefusal(
      `the bundle does not match the format: ${violations.map((v) => `${v.pointer} ${v.message}`).join('; ')}`,
    );
  }
  const bundle = value as BundleManifest & {
    client: { entry: string; files: Record<string, { encoding: string; data: string }> };
  };
  checkRules(bundle);
  const {
    client: _client,
    formatVersion: _v,
    ...manifest
  } = bundle as typeof bundle & {
    formatVersion: number;
  };
  return manifest;
}

function refuse(path: (string | number)[], message: string): never {
  throw new BundleRefusal(`${jsonPointer(path)} ${message}`);
}

function checkRules(
  bundle: BundleManifest & {
    client: { entry: string; files: Record<string, { encoding: string; data: string }> };
  },
): void {
  const known = new Set<string>(KNOWN_CAPABILITIES);
  const capabilities = new Set<string>();
  bundle.capabilities.forEach((c, i) => {
    if (!known.has(c)) {
      refuse(
        ['capabilities', i],
        `asks for the unknown capability ${JSON.stringify(c)}; known: ${KNOWN_CAPABILITIES.join(', ')}`,
      );
    }
    if (capabilities.has(c)) refuse(['capabilities', i], `names ${JSON.stringify(c)} twice`);
    capabilities.add(c);
  });
  const commands = new Set<string>();
  (bundle.contributes.commands ?? []).forEach((command, i) => {
    if (commands.has(command.name)) {
      refuse(
        ['contributes', 'commands', i, 'name'],
        `repeats the command name ${JSON.stringify(command.name)}; command names are unique in a bundle`,
      );
    }
    commands.add(command.name);
    const args = new Set<string>();
    (command.arguments ?? []).forEach((a, j) => {
      if (args.has(a.name)) {
        refuse(
          ['contributes', 'commands', i, 'arguments', j, 'name'],
          `repeats the argument name ${JSON.stringify(a.name)}`,
        );
      }
      args.add(a.name);
    });
  });
  const keys = new Set<string>();
  (bundle.contributes.keybinds ?? []).forEach((k, i) => {
    if (!commands.has(k.command)) {
      refuse(
        ['contributes', 'keybinds', i, 'command'],
        `names ${JSON.stringify(k.command)}, which is not a command of this bundle`,
      );
    }
    if (keys.has(k.keys)) refuse(['contributes', 'keybinds', i, 'keys'], `binds ${k.keys} twice`);
    keys.add(k.keys);
  });
  const settings = bundle.contributes.settings;
  if (settings) {
    for (const [name, s] of Object.entries(settings.properties)) {
      const at = ['contributes', 'settings', 'properties', name];
      for (const [i, e] of (s.enum ?? []).entries()) {
        const problem = settingProblem(s, e, true);
        if (problem) refuse([...at, 'enum', i], problem);
      }
      if (s.default !== undefined) {
        const problem = settingProblem(s, s.default);
        if (problem) refuse([...at, 'default'], `is not a valid value of the setting: ${problem}`);
      }
    }
    (settings.required ?? []).forEach((r, i) => {
      if (!Object.hasOwn(settings.properties, r)) {
        refuse(
          ['contributes', 'settings', 'required', i],
          `names ${JSON.stringify(r)}, which is not a setting`,
        );
      }
    });
  }
  const files = bundle.client.files;
  if (!Object.hasOwn(files, bundle.client.entry)) {
    refuse(
      ['client', 'entry'],
      `names ${JSON.stringify(bundle.client.entry)}, which is not a key of /client/files`,
    );
  }
  for (const [name, file] of Object.entries(files)) {
    if (file.encoding === 'base64' && !BASE64.test(file.data)) {
      refuse(['client', 'files', name, 'data'], 'is not valid base64 (RFC 4648, with padding)');
    }
  }
}

/** Why `value` is not a valid value of setting `s`, or null. */
function settingProblem(s: SettingSchema, value: unknown, skipEnum = false): string | null {
  const type = s.type;
  const ok =
    type === 'integer'
      ? typeof value === 'number' && Number.isInteger(value)
      : typeof value === type;
  if (!ok) return `must be ${type === 'integer' ? 'an integer' : `a ${type}`}`;
  if (!skipEnum && s.enum && !s.enum.includes(value as string | number)) {
    return `must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) return `must be at least ${s.minimum}`;
    if (s.maximum !== undefined && value > s.maximum) return `must be at most ${s.maximum}`;
  }
  if (typeof value === 'string' && s.maxLength !== undefined && [...value].length > s.maxLength) {
    return `is longer than ${s.maxLength} characters`;
  }
  return null;
}

/** Settings of a plugin are at most this many bytes of JSON. */
export const SETTINGS_MAX_BYTES = 16 * 1024;

/**
 * The settings a registry entry keeps: `given` (or, when null, `current`) over the schema's
 * defaults, checked against the bundle's settings schema. Answers the reason as a string.
 */
export function resolveSettings(
  schema: SettingsSchema | undefined,
  given: unknown,
): { ok: true; settings: Record<string, unknown> } | { ok: false; reason: string } {
  if (given === null || given === undefined) given = {};
  if (typeof given !== 'object' || Array.isArray(given)) {
    return { ok: false, reason: 'settings must be a JSON object' };
  }
  const values = given as Record<string, unknown>;
  if (JSON.stringify(values).length > SETTINGS_MAX_BYTES) {
    return { ok: false, reason: `settings are larger than ${SETTINGS_MAX_BYTES} bytes of JSON` };
  }
  const props = schema?.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    const s = props[name];
    if (!s || !Object.hasOwn(props, name)) {
      return { ok: false, reason: `settings.${name} is not a setting of this plugin` };
    }
    const problem = settingProblem(s, value);
    if (problem) return { ok: false, reason: `settings.${name} ${problem}` };
    out[name] = value;
  }
  for (const [name, s] of Object.entries(props)) {
    if (!(name in out) && s.default !== undefined) out[name] = s.default;
  }
  for (const r of schema?.required ?? []) {
    if (!(r in out)) return { ok: false, reason: `settings.${r} is required by this plugin` };
  }
  return { ok: true, settings: out };
}
