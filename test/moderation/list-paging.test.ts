import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import { conversationOf } from '../conversations/_helpers.js';
import { makeImage } from '../files/_image-upload.js';
import { bundleBytes } from '../plugins/_bundles.js';
import { ADD as ADD_PLUGIN, uploadBundle } from '../plugins/_helpers.js';

import { createWorkspace, inviteAndJoin } from '../workspaces/_helpers.js';

import { codeOf } from './_helpers.js';

// Lists that used to answer everything at once (or paged one way only) take the contract's cursor
// arguments (contract, Pagination): `instancePrincipalBlocks`, `instanceIpBlocks`,
// `instanceInvites`, `dmRequests`, `blockedUsers`, `workspaceInvites` and `Workspace.invites`
// (newest first), `channels` and `Workspace.channels`, `instanceReports` and `workspaceReports`
// (oldest first); `mySessions` (newest first), `macros`, `keybinds`, `pipelines`,
// `customEmojis`, `workspacePlugins` and `myWorkspaces` (oldest first). Each is paged both ways,
// with items inserted between the pages.
// Newest first: going on with `after` sees every item that was there exactly once and never a
// newer one; going back with `before` reaches the head, new items included, again exactly once.
// Oldest first (new items arrive at the end): going on with `after` sees every item once, those
// added meanwhile included; going back with `before` from the end sees every item before it once
// and none of those added meanwhile behind the cursor.

interface ListSpec {
  name: string;
  field: string;
  /** The largest `limit` (100 when not said). */
  max?: number;
  /** Where new items go: the head (newest first, the default) or the end (oldest first). */
  order?: 'newest' | 'oldest';
  /** The query reading the list, `$a`, `$b` and `$l` its paging variables; `field` at the root when none. */
  query?: (selection: string) => string;
  /** The list in the answer, when not `data[field]`. */
  pick?: (data: Record<string, any>) => unknown;
  /** The item's identity in the list. */
  key: string;
  /** Who reads the list. */
  reader: () => Agent;
  /** Adds one item (newest of the list). */
  insert: (n: number) => Promise<void>;
  /** Items made before paging (fewer where each costs a new account). */
  initial: number;
}

describe('lists paged both ways under concurrent inserts', () => {
  let t: TestApp;
  let op: Agent;
  let erin: Agent;
  let serial = 0;
  // A workspace of erin's that `reporters` joined, and its #general.
  let serverId = '';
  let general = '';
  let reporters: Agent[] = [];
  // Readers of lists of their own: workspaces they are in, sessions they hold.
  let wanda: Agent;
  let sam: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    op = await signUpAndIn(t, { operator: true });
    erin = await signUpAndIn(t);
    serverId = (await createWorkspace(t, erin, 'paging')).id;
    reporters = [await signUpAndIn(t), await signUpAndIn(t), await signUpAndIn(t)];
    await inviteAndJoin(t, erin, serverId, reporters);
    const chans = must(
      await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, erin),
    ).channels as Array<{ id: string; name: string }>;
    general = chans.find((c) => c.name === 'general')!.id;
    wanda = await signUpAndIn(t);
    sam = await signUpAndIn(t);
  });
  afterAll(async () => t?.close());

  const must = (res: { body: { errors?: unknown[]; data?: Record<string, any> | null } }) => {
    expect(res.body.errors).toBeUndefined();
    return res.body.data!;
  };

  // A message in #general reported by one of the reporters (at most 10 reports an hour each).
  const reportOne = async (n: number) => {
    const sent = must(
      await t.gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text: `report me ${n}` } },
        erin,
      ),
    ).sendMessage as { id: string };
    must(
      await t.gql(
        'mutation($id: ID!) { reportMessage(messageId: $id, category: SPAM) { id } }',
        { id: sent.id },
        reporters[n % reporters.length],
      ),
    );
  };
  const newChannel = async (n: number) => {
    must(
      await t.gql(
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId, name: `paged-${n}` } },
        erin,
      ),
    );
  };
  const newInvite = async () => {
    must(
      await t.gql(
        'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
        { i: { serverId } },
        erin,
      ),
    );
  };
  const inWorkspace = (field: string) => (sel: string) =>
    `query($a: String, $b: String, $l: Int, $s: ID!) {
      ${field}(serverId: $s, after: $a, before: $b, limit: $l) { ${sel} } }`;
  const emojiImage = makeImage('png', { width: 32, height: 32 });
  const onWorkspace = (field: string) => (selection: string) =>
    `query($a: String, $b: String, $l: Int, $s: ID!) { workspace(serverId: $s) {
      ${field}(after: $a, before: $b, limit: $l) { ${selection} } } }`;

  const specs: ListSpec[] = [
    {
      name: 'principal blocks',
      field: 'instancePrincipalBlocks',
      key: 'principalId',
      initial: 5,
      reader: () => op,
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($p: String!) { instanceBlockPrincipal(principalId: $p) { block { principalId } } }',
            { p: `server:peer${n}.example` },
            op,
          ),
        );
      },
    },
    {
      name: 'address blocks',
      field: 'instanceIpBlocks',
      key: 'cidr',
      initial: 5,
      reader: () => op,
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($c: String!) { instanceBlockIp(cidr: $c) { cidr } }',
            {
              c: `198.51.${n}.0/24`,
            },
            op,
          ),
        );
      },
    },
    {
      name: 'instance invites',
      field: 'instanceInvites',
      key: 'id',
      reader: () => op,
      initial: 5,
      insert: async () => {
        must(await t.gql('mutation { createInstanceInvite { invite { id } } }', {}, op));
      },
    },
    {
      name: 'DM requests',
      field: 'dmRequests',
      key: 'id',
      reader: () => erin,
      initial: 3,
      insert: async () => {
        const stranger = await signUpAndIn(t);
        await conversationOf(t, stranger, [erin]);
      },
    },
    {
      name: 'blocked users',
      field: 'blockedUsers',
      key: 'id',
      reader: () => op,
      initial: 3,
      insert: async () => {
        const pest = await signUpAndIn(t);
        must(await t.gql('mutation($u: ID!) { blockUser(userId: $u) }', { u: pest.id }, op));
      },
    },
    {
      name: 'workspace invites',
      field: 'workspaceInvites',
      key: 'id',
      reader: () => erin,
      initial: 4,
      query: (sel) => `query($a: String, $b: String, $l: Int, $s: ID!) {
        workspaceInvites(serverId: $s, after: $a, before: $b, limit: $l) { ${sel} } }`,
      insert: newInvite,
    },
    {
      name: 'a workspace’s invites',
      field: 'invites',
      key: 'id',
      reader: () => erin,
      initial: 2,
      query: onWorkspace('invites'),
      pick: (d) => d.workspace.invites,
      insert: newInvite,
    },
    {
      name: 'channels',
      field: 'channels',
      key: 'id',
      order: 'oldest',
      reader: () => erin,
      initial: 3,
      query: (sel) => `query($a: String, $b: String, $l: Int, $s: ID!) {
        channels(serverId: $s, after: $a, before: $b, limit: $l) { ${sel} } }`,
      insert: newChannel,
    },
    {
      name: 'a workspace’s channels',
      field: 'channels',
      key: 'id',
      order: 'oldest',
      reader: () => erin,
      initial: 2,
      query: onWorkspace('channels'),
      pick: (d) => d.workspace.channels,
      insert: newChannel,
    },
    {
      name: 'instance reports',
      field: 'instanceReports',
      key: 'id',
      max: 500,
      order: 'oldest',
      reader: () => op,
      initial: 4,
      insert: reportOne,
    },
    {
      name: 'workspace reports',
      field: 'workspaceReports',
      key: 'id',
      max: 500,
      order: 'oldest',
      reader: () => erin,
      initial: 2,
      query: (sel) => `query($a: String, $b: String, $l: Int, $s: ID!) {
        workspaceReports(serverId: $s, after: $a, before: $b, limit: $l) { ${sel} } }`,
      insert: reportOne,
    },
    {
      name: 'sessions',
      field: 'mySessions',
      key: 'id',
      reader: () => sam,
      initial: 3,
      insert: async () => {
        await signIn(t, sam.username);
      },
    },
    {
      name: 'macros, personal and the workspace’s',
      field: 'macros',
      key: 'id',
      order: 'oldest',
      reader: () => erin,
      initial: 3,
      query: inWorkspace('macros'),
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }',
            {
              i: {
                // Every other one the workspace's, the rest erin's own.
                serverId: n % 2 ? serverId : null,
                name: `paged-${n}`,
                steps: [{ command: 'me', args: { text: `macro ${n}` } }],
              },
            },
            erin,
          ),
        );
      },
    },
    {
      name: 'keybinds, personal and the workspace’s',
      field: 'keybinds',
      key: 'id',
      order: 'oldest',
      reader: () => erin,
      initial: 3,
      query: inWorkspace('keybinds'),
      insert: async (n) => {
        // Consecutive inserts get different chords (fewer than 26 of them in this case).
        const key = String.fromCharCode(65 + (n % 26));
        must(
          await t.gql(
            'mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id } }',
            {
              i: {
                serverId: n % 2 ? serverId : null,
                chord: `Ctrl+Alt+${key}`,
                command: 'me',
                args: { text: `keybind ${n}` },
              },
            },
            erin,
          ),
        );
      },
    },
    {
      name: 'pipelines',
      field: 'pipelines',
      key: 'id',
      order: 'oldest',
      reader: () => erin,
      initial: 3,
      query: inWorkspace('pipelines'),
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }',
            {
              i: {
                serverId,
                name: `paged-${n}`,
                trigger: { kind: 'MESSAGE', pattern: `never-said-${n}`, channelIds: [general] },
                channelId: general,
                steps: [{ command: 'me', args: { text: `pipeline ${n}` } }],
              },
            },
            erin,
          ),
        );
      },
    },
    {
      name: 'custom emoji',
      field: 'customEmojis',
      key: 'id',
      order: 'oldest',
      max: 1000,
      reader: () => reporters[0]!,
      initial: 3,
      query: inWorkspace('customEmojis'),
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($i: CreateCustomEmojiInput!) { createCustomEmoji(input: $i) { id } }',
            {
              i: {
                serverId,
                name: `paged-${n}`,
                contentType: 'image/png',
                image: (await emojiImage).toString('base64'),
              },
            },
            erin,
          ),
        );
      },
    },
    {
      name: 'workspace plugins',
      field: 'workspacePlugins',
      key: 'id',
      order: 'oldest',
      reader: () => reporters[0]!,
      initial: 3,
      query: inWorkspace('workspacePlugins'),
      insert: async (n) => {
        const bytes = bundleBytes((b) => {
          b.id = `com.example.paged${n}`;
        });
        const sha = await uploadBundle(t, erin, serverId, bytes);
        must(await t.gql(ADD_PLUGIN, { i: { serverId, bundleSha256: sha } }, erin));
      },
    },
    {
      name: 'my workspaces, the direct space first',
      field: 'myWorkspaces',
      key: 'id',
      order: 'oldest',
      reader: () => wanda,
      initial: 3,
      insert: async (n) => {
        await createWorkspace(t, wanda, `mine-${n}`);
      },
    },
  ];

  for (const spec of specs) {
    const queryOf = (selection: string) =>
      spec.query?.(selection) ??
      `query($a: String, $b: String, $l: Int) {
        ${spec.field}(after: $a, before: $b, limit: $l) { ${selection} } }`;
    const vars = (args: Record<string, unknown>) => (spec.query ? { ...args, s: serverId } : args);
    const read = async (args: Record<string, unknown>) => {
      const data = must(await t.gql(queryOf(`${spec.key} cursor`), vars(args), spec.reader()));
      return (spec.pick?.(data) ?? data[spec.field]) as Array<Record<string, string>>;
    };
    const keys = (items: Array<Record<string, string>>) => items.map((i) => i[spec.key]!);

    const oldestFirst = async () => {
      for (let i = 0; i < spec.initial; i++) await spec.insert(++serial);
      // On from the start, two at a time, an item added after each of the first three pages:
      // each one is met at the end, every item exactly once.
      const seen: string[] = [];
      let page = await read({ l: 2 });
      let added = 0;
      let last = page;
      while (page.length > 0) {
        seen.push(...keys(page));
        last = page;
        if (added++ < 3) await spec.insert(++serial);
        page = await read({ a: page[page.length - 1]!.cursor, l: 2 });
      }
      const all = keys(await read({}));
      expect(seen).toEqual(all);
      expect(all.length).toBeGreaterThanOrEqual(spec.initial + 3);

      // Back from the last item to the start, an item added (behind the cursor) between pages.
      const back: string[] = [];
      let cursor = last[last.length - 1]!.cursor;
      for (;;) {
        const prev = await read({ b: cursor, l: 2 });
        if (prev.length === 0) break;
        back.unshift(...keys(prev));
        cursor = prev[0]!.cursor;
        await spec.insert(++serial);
      }
      expect(back).toEqual(all.slice(0, -1));
    };

    const newestFirst = async () => {
      for (let i = 0; i < spec.initial; i++) await spec.insert(++serial);
      const before = keys(await read({}));
      expect(before.length).toBeGreaterThanOrEqual(spec.initial);
      expect(new Set(before).size).toBe(before.length);

      // Forward, two at a time, with an insert between every two pages.
      const seen: string[] = [];
      let page = await read({ l: 2 });
      let last = page;
      while (page.length > 0) {
        seen.push(...keys(page));
        last = page;
        await spec.insert(++serial);
        page = await read({ a: page[page.length - 1]!.cursor, l: 2 });
      }
      expect(seen).toEqual(before);

      // Back from the oldest item to the head: every item above it, once, newest first.
      const now = keys(await read({}));
      // One insert after each of the ceil(n / 2) pages that had items.
      expect(now.length).toBe(before.length + Math.ceil(before.length / 2));
      const back: string[] = [];
      let cursor = last[last.length - 1]!.cursor;
      for (;;) {
        const prev = await read({ b: cursor, l: 2 });
        if (prev.length === 0) break;
        back.unshift(...keys(prev));
        cursor = prev[0]!.cursor;
      }
      expect(back).toEqual(now.slice(0, -1));
    };

    it(`pages ${spec.name} both ways while items are added`, () =>
      spec.order === 'oldest' ? oldestFirst() : newestFirst());

    it(`refuses bad paging arguments of ${spec.name}`, async () => {
      const query = queryOf('cursor');
      const [first] = await read({ l: 1 });
      for (const args of [
        { a: 'not-a-cursor' },
        { a: first!.cursor, b: first!.cursor },
        { l: 0 },
        { l: (spec.max ?? 100) + 1 },
      ]) {
        expect(codeOf(await t.gql(query, vars(args), spec.reader())), JSON.stringify(args)).toBe(
          'VALIDATION',
        );
      }
    });
  }
});
