import type { Schema } from './json-schema-subset.js';

// The bundle format's JSON Schema (docs/plugins.md). docs/plugin-bundle.schema.json is the same
// document for plugin developers; a test keeps the two equal.

/** The media type of a bundle, for the upload's Content-Type and the download's. */
export const BUNDLE_MEDIA_TYPE = 'application/vnd.svc.plugin-bundle+json';

/** The one format version this server reads. */
export const BUNDLE_FORMAT_VERSION = 1;

/** Contract (Other constants): a bundle is at most 8 MiB. */
export const BUNDLE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * What a plugin may ask the client that runs it for. Clients grant these; the server only checks
 * that a bundle asks for nothing it does not know.
 */
export const KNOWN_CAPABILITIES = [
  'messages:read',
  'messages:write',
  'channels:read',
  'members:read',
  'notifications',
  'storage',
  'network',
] as const;

/** The types a command argument may have. */
export const ARGUMENT_TYPES = [
  'string',
  'integer',
  'number',
  'boolean',
  'user',
  'channel',
] as const;

/** The types a setting may have. */
export const SETTING_TYPES = ['string', 'integer', 'number', 'boolean'] as const;

const COMMAND_NAME = '^[a-z][a-z0-9-]{0,31}$';

export const BUNDLE_SCHEMA: Schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'svc workspace plugin bundle (application/vnd.svc.plugin-bundle+json), format 1',
  type: 'object',
  required: [
    'formatVersion',
    'id',
    'name',
    'version',
    'description',
    'author',
    'capabilities',
    'contributes',
    'client',
  ],
  additionalProperties: false,
  properties: {
    formatVersion: { const: BUNDLE_FORMAT_VERSION },
    id: {
      description: 'Reverse domain name, lower case: the same plugin in every version.',
      type: 'string',
      maxLength: 100,
      pattern: '^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)+$',
    },
    name: { type: 'string', minLength: 1, maxLength: 64 },
    version: {
      description: 'Semantic Versioning 2.0.0.',
      type: 'string',
      maxLength: 64,
      pattern:
        '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$',
    },
    description: { type: 'string', maxLength: 1000 },
    author: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100 },
        email: { type: 'string', maxLength: 254 },
        url: { type: 'string', maxLength: 2048, pattern: '^https?://' },
      },
    },
    capabilities: {
      description: 'What the plugin asks the client for; docs/plugins.md lists the known names.',
      type: 'array',
      maxItems: 16,
      items: { type: 'string', maxLength: 64 },
    },
    contributes: {
      type: 'object',
      additionalProperties: false,
      properties: {
        commands: { type: 'array', maxItems: 50, items: { $ref: '#/$defs/command' } },
        keybinds: { type: 'array', maxItems: 50, items: { $ref: '#/$defs/keybind' } },
        settings: { $ref: '#/$defs/settings' },
      },
    },
    client: {
      type: 'object',
      required: ['entry', 'files'],
      additionalProperties: false,
      properties: {
        entry: {
          description: 'The file the client runs: a key of files.',
          type: 'string',
          maxLength: 200,
        },
        files: {
          type: 'object',
          minProperties: 1,
          maxProperties: 100,
          propertyNames: {
            maxLength: 200,
            pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$',
          },
          additionalProperties: { $ref: '#/$defs/file' },
        },
      },
    },
  },
  $defs: {
    command: {
      type: 'object',
      required: ['name', 'description'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: COMMAND_NAME },
        description: { type: 'string', minLength: 1, maxLength: 200 },
        arguments: { type: 'array', maxItems: 10, items: { $ref: '#/$defs/argument' } },
      },
    },
    argument: {
      type: 'object',
      required: ['name', 'type'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[a-z][a-zA-Z0-9_]{0,31}$' },
        type: { enum: [...ARGUMENT_TYPES] },
        description: { type: 'string', maxLength: 200 },
        required: { type: 'boolean' },
      },
    },
    keybind: {
      type: 'object',
      required: ['keys', 'command'],
      additionalProperties: false,
      properties: {
        keys: {
          type: 'string',
          maxLength: 64,
          pattern:
            '^((Mod|Ctrl|Alt|Shift|Meta)\\+)*([A-Z0-9]|F[1-9]|F1[0-2]|Enter|Escape|Tab|Space|ArrowUp|ArrowDown|ArrowLeft|ArrowRight)$',
        },
        command: {
          description: 'The name of a command of this bundle.',
          type: 'string',
          pattern: COMMAND_NAME,
        },
        description: { type: 'string', maxLength: 200 },
      },
    },
    settings: {
      type: 'object',
      required: ['type', 'properties'],
      additionalProperties: false,
      properties: {
        type: { const: 'object' },
        properties: {
          type: 'object',
          maxProperties: 50,
          propertyNames: { pattern: '^[a-zA-Z][a-zA-Z0-9_]{0,63}$' },
          additionalProperties: { $ref: '#/$defs/setting' },
        },
        required: { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 64 } },
      },
    },
    setting: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: {
        type: { enum: [...SETTING_TYPES] },
        title: { type: 'string', maxLength: 100 },
        description: { type: 'string', maxLength: 500 },
        default: { type: ['string', 'number', 'boolean'] },
        enum: { type: 'array', minItems: 1, maxItems: 100, items: { type: ['string', 'number'] } },
        minimum: { type: 'number' },
        maximum: { type: 'number' },
        maxLength: { type: 'integer', minimum: 0, maximum: 10000 },
      },
    },
    file: {
      type: 'object',
      required: ['encoding', 'data'],
      additionalProperties: false,
      properties: {
        encoding: { enum: ['utf8', 'base64'] },
        mediaType: { type: 'string', maxLength: 100, pattern: '^[a-z]+/[a-zA-Z0-9.+-]+$' },
        data: { type: 'string' },
      },
    },
  },
};
