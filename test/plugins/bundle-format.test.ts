import fs from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseBoundedJson } from '../../src/services/plugins/bounded-json.js';
import { BUNDLE_SCHEMA } from '../../src/services/plugins/bundle-schema.js';
import { BundleRefusal, readBundle, resolveSettings } from '../../src/services/plugins/bundle.js';
import { unknownKeywords, validateAgainst } from '../../src/services/plugins/json-schema-subset.js';

import { bundleBytes, exampleBundle, exampleBundleText } from './_bundles.js';

// The bundle format (docs/plugins.md): the bounded parser, the schema subset, the rules beyond
// the schema, and the documents developers read (the schema file, the example).

function refusal(bytes: Uint8Array | string): string {
  try {
    readBundle(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  } catch (err) {
    if (err instanceof BundleRefusal) return err.message;
    throw err;
  }
  throw new Error('the bundle was accepted');
}

describe('the documents', () => {
  it('keeps docs/plugin-bundle.schema.json equal to the schema the server checks', () => {
    const file = JSON.parse(
      fs.readFileSync(
        path.join(import.meta.dirname, '../../docs/plugin-bundle.schema.json'),
        'utf8',
      ),
    );
    expect(file).toEqual(BUNDLE_SCHEMA);
    expect(unknownKeywords(file)).toEqual([]);
  });

  it('accepts the example of docs/plugins.md, which matches the schema file', () => {
    const text = exampleBundleText();
    expect(validateAgainst(JSON.parse(text), BUNDLE_SCHEMA)).toEqual([]);
    const manifest = readBundle(Buffer.from(text));
    expect(manifest.id).toBe('com.example.standup');
    expect(manifest.contributes.commands!.map((c) => c.name)).toEqual([
      'standup',
      'standup-summary',
    ]);
    expect(manifest).not.toHaveProperty('client');
  });
});

describe('bounded parsing', () => {
  it.each([
    ['{"a":1,"a":2}', /duplicate key "a" at \/a/],
    ['{"x":{"y":[{"k":1,"k":1}]}}', /duplicate key "k" at \/x\/y\/0\/k/],
    ['['.repeat(33) + ']'.repeat(33), /more than 32 deep/],
    [
      '{"a":1,}',
      /not valid JSON: "}" where a key in double quotes was expected at line 1, column 8/,
    ],
    ['{"a":1}\n x', /more text after the JSON value at line 2, column 2/],
    ['{"a":"\u0001"}', /control character/],
    ['{"a":"\\q"}', /bad escape/],
    ['{"a":', /the text ends where a value was expected/],
    ['NaN', /where a value was expected/],
  ])('refuses %s', (text, reason) => {
    expect(() => parseBoundedJson(text)).toThrow(reason);
  });

  it('parses what JSON.parse parses, with escapes and unicode', () => {
    const text = '{"a":[1,-2.5e3,true,false,null,"x\\"\\u00e9\\n",{}],"b":{"c":"ü"}}';
    expect(parseBoundedJson(text)).toEqual(JSON.parse(text));
  });

  it('refuses a million keys and a million values without building them', () => {
    const keys = '{' + Array.from({ length: 20_001 }, (_, i) => `"k${i}":0`).join(',') + '}';
    expect(() => parseBoundedJson(keys)).toThrow(/more than 20000 object keys/);
    const values = '[' + '0,'.repeat(1_000_000) + '0]';
    expect(() => parseBoundedJson(values)).toThrow(/more than 100000 JSON values/);
  });

  it('refuses deep nesting of any size at the limit, without recursing further', () => {
    const deep = '['.repeat(50_000_000 / 1000) + ']'.repeat(50_000_000 / 1000);
    expect(() => parseBoundedJson(deep)).toThrow(/more than 32 deep/);
  });

  it('keeps __proto__ as a plain key', () => {
    const v = parseBoundedJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.hasOwn(v, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('bundle refusals', () => {
  it.each<[string, (b: any) => void, RegExp]>([
    [
      'wrong format version',
      (b) => (b.formatVersion = 2),
      /^\/formatVersion is 2: this server reads bundles of format 1 only$/,
    ],
    ['no format version', (b) => delete b.formatVersion, /^\/formatVersion is missing/],
    [
      'a bad command name',
      (b) => (b.contributes.commands[0].name = 'Stand up'),
      /\/contributes\/commands\/0\/name "Stand up" does not match the pattern/,
    ],
    [
      'a name past its limit',
      (b) => (b.name = 'x'.repeat(65)),
      /\/name is longer than the limit of 64 characters/,
    ],
    ['a missing member', (b) => delete b.author, /\/ the member "author" is missing/],
    [
      'an unknown member',
      (b) => (b.homepage = 'x'),
      /\/homepage "homepage" is not a member this format knows/,
    ],
    [
      'a wrong type',
      (b) => (b.capabilities = 'storage'),
      /\/capabilities must be an array, not a string/,
    ],
    ['not semver', (b) => (b.version = '1.2'), /\/version "1.2" does not match the pattern/],
    [
      'an unknown capability',
      (b) => b.capabilities.push('camera'),
      /^\/capabilities\/4 asks for the unknown capability "camera"; known: messages:read/,
    ],
    [
      'duplicate command names',
      (b) => b.contributes.commands.push({ ...b.contributes.commands[0] }),
      /^\/contributes\/commands\/2\/name repeats the command name "standup"/,
    ],
    [
      'a keybind of no command',
      (b) => (b.contributes.keybinds[0].command = 'nope'),
      /^\/contributes\/keybinds\/0\/command names "nope"/,
    ],
    [
      'an entry that is not a file',
      (b) => (b.client.entry = 'index.js'),
      /^\/client\/entry names "index.js"/,
    ],
    [
      'bad base64',
      (b) => (b.client.files['styles/card.css'].data = 'not base64!'),
      /^\/client\/files\/styles~1card.css\/data is not valid base64/,
    ],
    [
      'a default of the wrong type',
      (b) => (b.contributes.settings.properties.reminderHour.default = 'nine'),
      /reminderHour\/default is not a valid value of the setting: must be an integer/,
    ],
    [
      'too many commands',
      (b) =>
        (b.contributes.commands = Array.from({ length: 51 }, (_, i) => ({
          name: `c${i}`,
          description: 'd',
        }))),
      /\/contributes\/commands has 51 items, more than the limit of 50/,
    ],
    [
      'a file path that climbs',
      (b) => (b.client.files['../x.js'] = { encoding: 'utf8', data: '' }),
      /\/client\/files\/..~1x.js the name/,
    ],
  ])('%s', (_name, change, reason) => {
    expect(refusal(bundleBytes(change))).toMatch(reason);
  });

  it('refuses text that is not UTF-8, not JSON, or not an object', () => {
    expect(refusal(Buffer.from([0x7b, 0xff, 0x7d]))).toMatch(/not UTF-8/);
    expect(refusal('{"formatVersion":1,')).toMatch(/^not valid JSON/);
    expect(refusal('[1]')).toMatch(/must be a JSON object/);
    expect(
      refusal(
        exampleBundleText().replace('"name": "Standup"', '"name": "Standup", "name": "Again"'),
      ),
    ).toMatch(/duplicate key "name" at \/name/);
  });
});

describe('settings against a bundle schema', () => {
  const schema = exampleBundle().contributes.settings;
  it.each<[unknown, string | Record<string, unknown>]>([
    [null, { channel: 'standup', reminderHour: 9, style: 'short' }],
    [
      { channel: 'daily', style: 'detailed' },
      { channel: 'daily', reminderHour: 9, style: 'detailed' },
    ],
    [{ reminderHour: 24 }, 'settings.reminderHour must be at most 23'],
    [{ reminderHour: 1.5 }, 'settings.reminderHour must be an integer'],
    [{ style: 'long' }, 'settings.style must be one of "short", "detailed"'],
    [{ colour: 'red' }, 'settings.colour is not a setting of this plugin'],
    [{ channel: 'x'.repeat(81) }, 'settings.channel is longer than 80 characters'],
    [[1], 'settings must be a JSON object'],
  ])('%j', (given, expected) => {
    const res = resolveSettings(schema, given);
    if (typeof expected === 'string') expect(res).toEqual({ ok: false, reason: expected });
    else expect(res).toEqual({ ok: true, settings: expected });
  });

  it('refuses a missing required setting without a default', () => {
    const s = { ...schema, properties: { ...schema.properties, channel: { type: 'string' } } };
    expect(resolveSettings(s, {})).toEqual({
      ok: false,
      reason: 'settings.channel is required by this plugin',
    });
  });
});
