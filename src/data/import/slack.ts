import path from 'node:path';

import { openArchive, type Archive } from './archive.js';
import { arrayItems, type JsonItem } from './json-items.js';
import {
  countSkip,
  type FileReference,
  type ImportSource,
  type Problem,
  type SourceConversation,
  type SourceMessage,
  type SourcePerson,
  type SourceRole,
  type SourceWorkspace,
} from './model.js';
import { obj, str } from './json-fields.js';
import { convertSlackText } from './slack-text.js';

// Slack's workspace export (slack.com/help/articles/220556107, "How to read Slack data exports"):
// users.json (org_users.json on Enterprise Grid), channels.json, groups.json (private
// channels), dms.json, mpims.json (group messages), and a folder per conversation with one JSON
// array of messages per day (`general/2024-01-31.json`). Public channel and private channel
// folders are named after the channel, direct message folders after their id, group message
// folders after their name. Files are links back to Slack, not in the archive.

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** Slack's message time `1700000000.123456` in ms; null when it is not one. */
export function slackTime(ts: unknown): number | null {
  if (typeof ts !== 'string' || !/^\d{1,12}(?:\.\d{1,6})?$/.test(ts)) return null;
  const [sec, frac = ''] = ts.split('.');
  return Number(sec) * 1000 + Math.floor(Number(frac.padEnd(6, '0')) / 1000);
}

/** Notices Slack writes as messages: joins, leaves, renames, topic and pin notices. */
const NOTICES = new Set([
  'channel_join',
  'channel_leave',
  'channel_topic',
  'channel_purpose',
  'channel_name',
  'channel_archive',
  'channel_unarchive',
  'channel_convert_to_private',
  'channel_convert_to_public',
  'group_join',
  'group_leave',
  'group_topic',
  'group_purpose',
  'group_name',
  'group_archive',
  'group_unarchive',
  'pinned_item',
  'unpinned_item',
  'bot_add',
  'bot_remove',
  'reminder_add',
  'joiner_notification',
  'huddle_thread',
]);

interface Conversation extends SourceConversation {
  folder: string;
  /** Pins listed on the channel (older exports): message ts to who and when. */
  pins: Map<string, { user: string; at: number }>;
}

export interface SlackOptions {
  /** The new workspace's name; the export's file name when not given. */
  name: string | null;
}

export async function readSlackExport(file: string, opts: SlackOptions): Promise<ImportSource> {
  const archive = await openArchive(file);
  try {
    return await read(archive, file, opts);
  } catch (err) {
    await archive.close();
    throw err;
  }
}

async function read(archive: Archive, file: string, opts: SlackOptions): Promise<ImportSource> {
  const problems: Problem[] = [];
  const skipped = new Map<string, number>();
  // An export zipped with its folder keeps that folder as a prefix of every name.
  const usersName = archive.names.find((n) => /(?:^|\/)(?:org_)?users\.json$/.test(n));
  if (!usersName) {
    throw new Error(`${file} is not a Slack export: it has no users.json`);
  }
  const prefix = usersName.slice(0, usersName.lastIndexOf('/') + 1);
  const names = new Set(archive.names);
  const list = async (name: string): Promise<JsonItem[]> => {
    if (!names.has(prefix + name)) return [];
    const read = arrayItems(await archive.read(prefix + name), name);
    problems.push(...read.problems);
    return read.items;
  };

  const people = new Map<string, SourcePerson>();
  /** Bot users by their bot id: a bot's messages name the bot, not its user. */
  const bots = new Map<string, string>();
  const roles = new Map<string, SourceRole>();
  const teams = new Map<string, number>();
  for (const { value, place } of await list(usersName.slice(prefix.length))) {
    const u = obj(value);
    const id = str(u?.id);
    const username = str(u?.name);
    if (!u || !id || !username) {
      problems.push({ ...place, message: 'a user needs an "id" and a "name"' });
      continue;
    }
    const profile = obj(u.profile) ?? {};
    people.set(id, {
      key: id,
      username,
      displayName: str(profile.display_name) || str(profile.real_name) || str(u.real_name) || null,
      email: str(profile.email),
      deactivated: u.deleted === true,
    });
    const botId = str(profile.bot_id);
    if (botId) bots.set(botId, id);
    const team = str(u.team_id);
    if (team) teams.set(team, (teams.get(team) ?? 0) + 1);
    roles.set(
      id,
      u.is_primary_owner === true
        ? 'owner'
        : u.is_owner === true || u.is_admin === true
          ? 'moderator'
          : u.is_restricted === true || u.is_ultra_restricted === true
            ? 'guest'
            : 'member',
    );
  }
  // The primary owner first, so the workspace is theirs.
  const members = new Map(
    [...roles].sort(([, a], [, b]) => (a === 'owner' ? -1 : b === 'owner' ? 1 : 0)),
  );
  const team = [...teams].sort((a, b) => b[1] - a[1])[0]?.[0];
  const workspace: SourceWorkspace = {
    key: team ? `team:${team}` : `file:${path.basename(file)}`,
    name: opts.name ?? path.basename(file).replace(/\.zip$/i, ''),
    description: null,
    members,
    createdAt: 0,
  };

  const conversations: Conversation[] = [];
  const channelNames = new Map<string, string>();
  const addConversations = async (listName: string, kind: SourceConversation['kind']) => {
    for (const { value, place } of await list(listName)) {
      const c = obj(value);
      const id = str(c?.id);
      const name = str(c?.name);
      if (!c || !id || (kind !== 'direct' && !name)) {
        problems.push({
          ...place,
          message:
            kind === 'direct'
              ? 'a conversation needs an "id"'
              : 'a conversation needs an "id" and a "name"',
        });
        continue;
      }
      const created = typeof c.created === 'number' ? c.created * 1000 : 0;
      if (workspace.createdAt === 0 || (created && created < workspace.createdAt)) {
        workspace.createdAt = created;
      }
      const pins = new Map<string, { user: string; at: number }>();
      for (const p of Array.isArray(c.pins) ? c.pins : []) {
        const pin = obj(p);
        const ts = str(pin?.id);
        const user = str(pin?.user);
        if (ts && user) {
          pins.set(ts, { user, at: typeof pin!.created === 'number' ? pin!.created * 1000 : 0 });
        }
      }
      const topic = str(obj(c.topic)?.value) || str(obj(c.purpose)?.value) || null;
      if (name) channelNames.set(id, name);
      conversations.push({
        key: id,
        workspaceKey: kind === 'channel' ? workspace.key : null,
        kind,
        name: kind === 'channel' ? name : null,
        topic,
        isPrivate: listName === 'groups.json',
        archived: c.is_archived === true,
        createdBy: str(c.creator) ?? str(c.user),
        createdAt: created,
        members: new Set(strings(c.members)),
        place,
        folder: kind === 'direct' ? id : name!,
        pins,
      });
    }
  };
  await addConversations('channels.json', 'channel');
  await addConversations('groups.json', 'channel');
  await addConversations('dms.json', 'direct');
  await addConversations('mpims.json', 'group');
  for (const c of conversations) {
    for (const m of c.members) if (!people.has(m)) people.set(m, unlisted(m));
  }

  async function* messages(): AsyncIterable<SourceMessage> {
    for (const c of conversations) {
      const days = archive.names
        .filter(
          (n) => n.startsWith(`${prefix}${c.folder}/`) && /\/\d{4}-\d{2}-\d{2}\.json$/.test(n),
        )
        .sort();
      const read: SourceMessage[] = [];
      const seen = new Set<string>();
      for (const day of days) {
        const shortName = day.slice(prefix.length);
        const parsed = arrayItems(await archive.read(day), shortName);
        problems.push(...parsed.problems);
        for (const item of parsed.items) {
          const m = toMessage(item, c);
          if (m === null) continue;
          if (seen.has(m.key)) {
            countSkip(skipped, 'messages listed twice');
            continue;
          }
          seen.add(m.key);
          read.push(m);
        }
      }
      read.sort((a, b) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : 1));
      yield* read;
    }
  }

  function toMessage({ value, place }: JsonItem, c: Conversation): SourceMessage | null {
    const m = obj(value);
    if (!m) {
      problems.push({ ...place, message: 'a message must be a JSON object' });
      return null;
    }
    const subtype = str(m.subtype);
    if (m.type !== undefined && m.type !== 'message') {
      countSkip(skipped, 'items that are not messages');
      return null;
    }
    if (subtype && NOTICES.has(subtype)) {
      countSkip(skipped, 'Slack notices (joins, leaves, topic and pin changes)');
      return null;
    }
    if (subtype === 'tombstone') {
      countSkip(skipped, 'deleted messages');
      return null;
    }
    const ts = str(m.ts);
    const createdAt = slackTime(ts);
    if (ts === null || createdAt === null) {
      problems.push({ ...place, message: 'a message needs a "ts" such as "1700000000.000100"' });
      return null;
    }
    let author = str(m.user);
    const botId = str(m.bot_id);
    if (!author && botId) author = bots.get(botId) ?? null;
    if (!author && botId) {
      author = `bot:${botId}`;
      if (!people.has(author)) {
        const name = str(m.username) ?? str(obj(m.bot_profile)?.name) ?? 'bot';
        people.set(author, {
          key: author,
          username: name,
          displayName: name,
          email: null,
          deactivated: false,
        });
      }
    }
    if (!author) {
      problems.push({ ...place, message: 'a message needs a "user" (or a "bot_id")' });
      return null;
    }
    if (!people.has(author)) {
      const profile = obj(m.user_profile);
      people.set(author, {
        ...unlisted(author),
        username: str(profile?.name) ?? author,
        displayName: str(profile?.real_name),
      });
    }
    let raw = str(m.text) ?? '';
    if (raw.trim() === '' && Array.isArray(m.attachments)) {
      raw = m.attachments
        .map((a) => str(obj(a)?.fallback) ?? '')
        .filter(Boolean)
        .join('\n');
    }
    const text = convertSlackText(raw, (id) => channelNames.get(id) ?? null);
    for (const id of text.mentions) if (!people.has(id)) people.set(id, unlisted(id));
    const threadTs = str(m.thread_ts);
    const reactions: SourceMessage['reactions'] = [];
    for (const r of Array.isArray(m.reactions) ? m.reactions : []) {
      const reaction = obj(r);
      const name = str(reaction?.name);
      if (!name) continue;
      for (const user of strings(reaction!.users)) {
        if (!people.has(user)) people.set(user, unlisted(user));
        reactions.push({ name, personKey: user, createdAt });
      }
    }
    let pin: SourceMessage['pin'] = null;
    const listed = c.pins.get(ts);
    if (listed && people.has(listed.user))
      pin = { personKey: listed.user, at: listed.at || createdAt };
    else if (strings(m.pinned_to).includes(c.key)) pin = { personKey: author, at: createdAt };
    const files: FileReference[] = [];
    for (const f of [...(Array.isArray(m.files) ? m.files : []), ...(m.file ? [m.file] : [])]) {
      const ref = obj(f);
      if (!ref) continue;
      const name = str(ref.name) ?? str(ref.title) ?? str(ref.id) ?? 'file';
      files.push({
        name,
        location: str(ref.url_private_download) ?? str(ref.url_private) ?? str(ref.permalink),
      });
    }
    const edited = obj(m.edited);
    return {
      key: `${c.key}:${ts}`,
      conversationKey: c.key,
      authorKey: author,
      text: text.text,
      createdAt,
      editedAt: slackTime(edited?.ts),
      threadKey: threadTs && threadTs !== ts ? `${c.key}:${threadTs}` : null,
      reactions,
      pin,
      files,
      mentionKeys: text.mentions,
      place,
    };
  }

  return {
    name: 'slack',
    people,
    workspaces: [workspace],
    conversations,
    messages,
    problems,
    skipped,
    emoji: [],
    // Slack's export names its files by their links only.
    openFile: async () => null,
    close: () => archive.close(),
  };
}

/** Someone a message or conversation names whom users.json does not list. */
function unlisted(id: string): SourcePerson {
  return { key: id, username: id.toLowerCase(), displayName: null, email: null, deactivated: true };
}
