import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import { openArchive, type Archive } from './archive.js';
import {
  countSkip,
  type FileReference,
  type ImportSource,
  type Place,
  type Problem,
  type SourceConversation,
  type SourceEmoji,
  type SourceMessage,
  type SourcePerson,
  type SourceRole,
  type SourceWorkspace,
} from './model.js';
import { obj, str, type Json } from './json-fields.js';

// Mattermost's bulk import format (docs.mattermost.com, "Bulk loading data"; the line types of
// server/channels/app/imports/import_types.go): JSON Lines, `version` first, then `team`,
// `emoji`, `channel`, `user` (with team and channel memberships), `post` (with `replies`,
// `reactions` and `attachments`), `direct_channel` and `direct_post`. Given as the .jsonl file,
// or a .zip holding one with the files it names (as `mmctl export --attachments` writes it:
// `data/...`). Attachment and emoji paths are looked up in the ZIP, or beside the .jsonl file,
// never outside it; a file the export does not carry is listed in the report.

const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Thrown to skip a line: its message is the problem reported. */
class Malformed extends Error {}

function need<T>(value: T | null, what: string): T {
  if (value === null || value === undefined || value === '') throw new Malformed(what);
  return value;
}

/** Each line of the export as text with its number. */
async function* lines(
  file: string,
  archive: Archive | null,
): AsyncIterable<{ text: string; line: number }> {
  if (archive) {
    const name = archive.names.find((n) => n.endsWith('.jsonl'));
    if (!name) throw new Error(`${file} holds no .jsonl file`);
    const text = await archive.read(name);
    let line = 0;
    for (const t of text.split('\n')) yield { text: t, line: ++line };
    return;
  }
  const rl = readline.createInterface({
    input: fs.createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Infinity,
  });
  let line = 0;
  for await (const text of rl) yield { text, line: ++line };
}

/**
 * A path the export names, as a relative path inside the export (`/` between folders); null
 * for an absolute path or one that climbs out (`../`).
 */
function insidePath(location: string): string | null {
  const p = location.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[a-z]:/i.test(p)) return null;
  const normal = path.posix.normalize(p);
  if (normal === '..' || normal.startsWith('../') || normal === '.') return null;
  return normal;
}

/**
 * Opens a file the export carries: in the ZIP under its path (or under `data/`, where `mmctl
 * export` puts them), else beside the .jsonl file; a regular file only (no link), never a path
 * outside the export. Null when there is none.
 */
function fileOpener(file: string, archive: Archive | null) {
  const names = new Set(archive?.names ?? []);
  const folder = path.dirname(file);
  return async (location: string): Promise<AsyncIterable<Uint8Array> | null> => {
    const inside = insidePath(location);
    if (inside === null) return null;
    for (const name of [inside, `data/${inside}`]) {
      if (archive) {
        if (names.has(name)) return archive.open(name);
        continue;
      }
      const full = path.join(folder, ...name.split('/'));
      const st = await fs.promises.lstat(full).catch(() => null);
      if (st?.isFile()) return fs.createReadStream(full);
    }
    return null;
  };
}

const directKey = (members: readonly string[]) =>
  `direct:${[...new Set(members)].sort().join(',')}`;

export async function readMattermostExport(file: string): Promise<ImportSource> {
  await fs.promises.access(file, fs.constants.R_OK);
  const archive = /\.zip$/i.test(file) ? await openArchive(file) : null;
  try {
    return await read(file, archive);
  } catch (err) {
    await archive?.close();
    throw err;
  }
}

async function read(file: string, archive: Archive | null): Promise<ImportSource> {
  const shortName = path.basename(file);
  const emoji: SourceEmoji[] = [];
  const problems: Problem[] = [];
  const skipped = new Map<string, number>();
  const people = new Map<string, SourcePerson>();
  const workspaces = new Map<string, SourceWorkspace>();
  const conversations = new Map<string, SourceConversation>();
  const report = (place: Place, message: string) => problems.push({ ...place, message });

  const direct = (members: string[], place: Place, at: number, header: string | null) => {
    const key = directKey(members);
    let c = conversations.get(key);
    if (!c) {
      const distinct = new Set(members);
      c = {
        key,
        workspaceKey: null,
        kind: distinct.size > 2 ? 'group' : 'direct',
        name: null,
        topic: header,
        isPrivate: true,
        archived: false,
        createdBy: members[0] ?? null,
        createdAt: at,
        members: distinct,
        place,
      };
      conversations.set(key, c);
    }
    if (at && (c.createdAt === 0 || at < c.createdAt)) c.createdAt = at;
    return c;
  };

  // First pass: everything but the posts, and the direct conversations posts imply.
  let first = true;
  for await (const { text, line } of lines(file, archive)) {
    const place = { file: shortName, line };
    if (text.trim() === '') continue;
    let item: Json | null;
    try {
      item = obj(JSON.parse(text));
    } catch (err) {
      report(place, `not valid JSON: ${(err as Error).message}`);
      continue;
    }
    const type = str(item?.type);
    if (first) {
      first = false;
      if (type !== 'version' || item?.version !== 1) {
        report(place, 'the first line must be {"type":"version","version":1}');
      }
      if (type === 'version') continue;
    }
    try {
      switch (type) {
        case 'version':
          throw new Malformed('"version" must be the first line, once');
        case 'team': {
          const t = need(obj(item!.team), 'a "team" line needs a "team" object');
          const name = need(str(t.name), 'a team needs a "name"');
          workspaces.set(`team:${name}`, {
            key: `team:${name}`,
            name: str(t.display_name) || name,
            description: str(t.description),
            members: new Map(),
            createdAt: 0,
          });
          break;
        }
        case 'channel': {
          const ch = need(obj(item!.channel), 'a "channel" line needs a "channel" object');
          const team = need(str(ch.team), 'a channel needs its "team"');
          const name = need(str(ch.name), 'a channel needs a "name"');
          if (!workspaces.has(`team:${team}`))
            throw new Malformed(`no team "${team}" comes before it`);
          const chType = str(ch.type) ?? 'O';
          if (chType !== 'O' && chType !== 'P')
            throw new Malformed('a channel\'s "type" is "O" or "P"');
          conversations.set(`channel:${team}/${name}`, {
            key: `channel:${team}/${name}`,
            workspaceKey: `team:${team}`,
            kind: 'channel',
            name,
            topic: str(ch.purpose) || str(ch.header) || null,
            isPrivate: chType === 'P',
            archived: false,
            createdBy: null,
            createdAt: 0,
            members: new Set(),
            place,
          });
          break;
        }
        case 'user': {
          const u = need(obj(item!.user), 'a "user" line needs a "user" object');
          const username = need(str(u.username), 'a user needs a "username"').toLowerCase();
          const full = [str(u.first_name), str(u.last_name)].filter(Boolean).join(' ');
          people.set(username, {
            key: username,
            username,
            displayName: str(u.nickname) || full || null,
            email: str(u.email),
            deactivated: (num(u.delete_at) ?? 0) > 0,
          });
          for (const membership of list(u.teams)) {
            const tm = obj(membership);
            const team = str(tm?.name);
            const ws = team ? workspaces.get(`team:${team}`) : undefined;
            if (!tm || !ws) continue;
            const roles = str(tm.roles) ?? '';
            const role: SourceRole = /\bteam_admin\b/.test(roles)
              ? 'moderator'
              : /\bteam_guest\b/.test(roles)
                ? 'guest'
                : 'member';
            ws.members.set(username, role);
            for (const cm of list(tm.channels)) {
              const channel = str(obj(cm)?.name);
              conversations.get(`channel:${team}/${channel}`)?.members.add(username);
            }
          }
          break;
        }
        case 'direct_channel': {
          const d = need(obj(item!.direct_channel), 'a "direct_channel" line needs its object');
          const members = list(d.members).map(str);
          if (members.length < 1 || members.some((m) => !m)) {
            throw new Malformed('a direct channel needs its "members" usernames');
          }
          direct(
            members.map((m) => m!.toLowerCase()),
            place,
            0,
            str(d.header),
          );
          break;
        }
        case 'direct_post': {
          const p = obj(item!.direct_post);
          const members = list(p?.channel_members).map(str);
          if (members.length > 0 && members.every(Boolean)) {
            direct(
              members.map((m) => m!.toLowerCase()),
              place,
              num(p?.create_at) ?? 0,
              null,
            );
          }
          break;
        }
        case 'post':
          break;
        case 'emoji': {
          const e = need(obj(item!.emoji), 'an "emoji" line needs an "emoji" object');
          emoji.push({
            name: need(str(e.name), 'an emoji needs a "name"'),
            image: need(str(e.image), 'an emoji needs its "image" path'),
            place,
          });
          break;
        }
        case 'scheme':
          countSkip(skipped, `"${type}" lines (not imported)`);
          break;
        default:
          throw new Malformed(`unknown line type ${JSON.stringify(type)}`);
      }
    } catch (err) {
      if (!(err instanceof Malformed)) throw err;
      report(place, err.message);
    }
  }
  for (const c of conversations.values()) {
    for (const m of c.members) if (!people.has(m)) people.set(m, unlisted(m));
  }

  /** The text with known usernames as `<@key>` tokens, and whom it mentions. */
  const mentionsIn = (text: string) => {
    const keys = new Set<string>();
    const out = text.replace(
      /(?<![\p{L}\p{N}_.@/-])@([\p{L}\p{N}_.-]{1,64})/gu,
      (whole, name: string) => {
        const key = name.replace(/[.-]+$/, '').toLowerCase();
        if (!people.has(key)) return whole;
        keys.add(key);
        return `<@${key}>${name.slice(key.length)}`;
      },
    );
    // Mattermost's `~channel` is svc's `#channel`; its `@all` is `@channel`.
    const svcText = out
      .replace(/(?<![\p{L}\p{N}_~/-])~([a-z0-9_-]{1,64})/gu, '#$1')
      .replace(/(?<![\p{L}\p{N}_.@/-])@all\b/gu, '@channel');
    return { text: svcText, keys: [...keys] };
  };

  const person = (name: string | null, what: string): string => {
    const key = need(name, what).toLowerCase();
    if (!people.has(key)) people.set(key, unlisted(key));
    return key;
  };

  /** One post or reply; throws Malformed. */
  const message = (
    p: Json,
    key: string,
    conversationKey: string,
    threadKey: string | null,
    place: Place,
  ): SourceMessage => {
    const author = person(str(p.user), 'a post needs its "user"');
    const createdAt = need(num(p.create_at), 'a post needs "create_at" (ms since 1970)');
    const raw = str(p.message);
    if (raw === null) throw new Malformed('a post needs a "message" string');
    const files: FileReference[] = list(p.attachments).flatMap((a) => {
      const at = str(obj(a)?.path);
      return at ? [{ name: path.posix.basename(at), location: at }] : [];
    });
    const reactions = list(p.reactions).map((r) => {
      const reaction = need(obj(r), 'a reaction must be an object');
      return {
        name: need(str(reaction.emoji_name), 'a reaction needs its "emoji_name"'),
        personKey: person(str(reaction.user), 'a reaction needs its "user"'),
        createdAt: num(reaction.create_at) ?? createdAt,
      };
    });
    const text = mentionsIn(raw);
    const edited = num(p.edit_at);
    return {
      key,
      conversationKey,
      authorKey: author,
      text: text.text,
      createdAt,
      editedAt: edited && edited > 0 ? edited : null,
      threadKey,
      reactions,
      pin: p.is_pinned === true ? { personKey: author, at: createdAt } : null,
      files,
      mentionKeys: text.keys,
      place,
    };
  };

  async function* messages(): AsyncIterable<SourceMessage> {
    for await (const { text, line } of lines(file, archive)) {
      if (!text.includes('"post"') && !text.includes('"direct_post"')) continue;
      const place = { file: shortName, line };
      let item: Json | null;
      try {
        item = obj(JSON.parse(text));
      } catch {
        continue; // reported by the first pass
      }
      const type = str(item?.type);
      if (type !== 'post' && type !== 'direct_post') continue;
      let out: SourceMessage[];
      try {
        const p = need(obj(item![type]), `a "${type}" line needs its "${type}" object`);
        if (str(p.type)?.startsWith('system_')) {
          countSkip(skipped, 'Mattermost system messages');
          continue;
        }
        let conversationKey: string;
        let base: string;
        if (type === 'post') {
          const team = need(str(p.team), 'a post needs its "team"');
          const channel = need(str(p.channel), 'a post needs its "channel"');
          conversationKey = `channel:${team}/${channel}`;
          if (!conversations.has(conversationKey)) {
            throw new Malformed(`no channel "${channel}" of team "${team}" in the export`);
          }
          base = `post:${team}/${channel}`;
        } else {
          const members = list(p.channel_members).map(str);
          if (members.length === 0 || members.some((m) => !m)) {
            throw new Malformed('a direct post needs its "channel_members" usernames');
          }
          conversationKey = directKey(members.map((m) => m!.toLowerCase()));
          base = `dpost:${conversationKey}`;
        }
        const key = `${base}/${str(p.user)?.toLowerCase()}/${num(p.create_at)}`;
        const root = message(p, key, conversationKey, null, place);
        out = [root];
        for (const r of list(p.replies)) {
          const reply = need(obj(r), 'a reply must be an object');
          const replyKey = `${key}/reply/${str(reply.user)?.toLowerCase()}/${num(reply.create_at)}`;
          out.push(message(reply, replyKey, conversationKey, key, place));
        }
      } catch (err) {
        if (!(err instanceof Malformed)) throw err;
        problems.push({ ...place, message: err.message });
        continue;
      }
      // A message listed twice is written once (writeBatch and the import map see to it).
      yield* out;
    }
  }

  return {
    name: 'mattermost',
    people,
    workspaces: [...workspaces.values()],
    conversations: [...conversations.values()],
    messages,
    problems,
    skipped,
    emoji,
    openFile: fileOpener(file, archive),
    close: async () => archive?.close(),
  };
}

/** Someone a post or membership names whom no "user" line lists. */
function unlisted(username: string): SourcePerson {
  return { key: username, username, displayName: null, email: null, deactivated: true };
}
