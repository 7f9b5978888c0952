import fs from 'node:fs';
import path from 'node:path';

import yazl from 'yazl';

// A Slack workspace export of any size, made when a test or bench runs (the repository keeps the
// small hand-written fixture in fixtures/slack, not a large file): users.json, channels.json and a
// folder per channel with a day file per 1,000 messages, every tenth message a thread start
// with three replies, every seventh with reactions, every fiftieth sharing a file.

export interface GeneratedExport {
  dir: string;
  messages: number;
  replies: number;
  reactions: number;
  files: number;
}

const BASE_SECONDS = 1_600_000_000;
const PER_DAY = 1000;

export function generateSlackExport(
  dir: string,
  opts: { users: number; channels: number; messagesPerChannel: number },
): GeneratedExport {
  fs.mkdirSync(dir, { recursive: true });
  const users = Array.from({ length: opts.users }, (_, i) => ({
    id: `U${String(i).padStart(6, '0')}`,
    team_id: 'TGEN',
    name: `person${i}`,
    deleted: false,
    real_name: `Person ${i}`,
    is_admin: i === 1,
    is_owner: i === 0,
    is_primary_owner: i === 0,
    profile: { real_name: `Person ${i}`, display_name: `p${i}`, email: `person${i}@gen.example` },
  }));
  fs.writeFileSync(path.join(dir, 'users.json'), JSON.stringify(users, null, 4));
  const channels = Array.from({ length: opts.channels }, (_, c) => ({
    id: `C${String(c).padStart(6, '0')}`,
    name: `channel-${c}`,
    created: BASE_SECONDS,
    creator: users[0]!.id,
    is_archived: false,
    members: users.map((u) => u.id),
    topic: { value: `Topic ${c}` },
    purpose: { value: '' },
  }));
  fs.writeFileSync(path.join(dir, 'channels.json'), JSON.stringify(channels, null, 4));
  const out: GeneratedExport = { dir, messages: 0, replies: 0, reactions: 0, files: 0 };
  for (const [c, channel] of channels.entries()) {
    fs.mkdirSync(path.join(dir, channel.name));
    let day: unknown[] = [];
    let dayIndex = 0;
    let threadTs: string | null = null;
    let repliesLeft = 0;
    const flush = () => {
      if (day.length === 0) return;
      const date = new Date((BASE_SECONDS + dayIndex * 86_400) * 1000).toISOString().slice(0, 10);
      fs.writeFileSync(path.join(dir, channel.name, `${date}.json`), JSON.stringify(day, null, 4));
      day = [];
      dayIndex++;
    };
    for (let i = 0; i < opts.messagesPerChannel; i++) {
      const seconds = BASE_SECONDS + dayIndex * 86_400 + (i % PER_DAY) * 60;
      const ts = `${seconds}.${String(c * 1000 + (i % 1000)).padStart(6, '0')}`;
      const user = users[(i * 7 + c) % users.length]!;
      const m: Record<string, unknown> = {
        type: 'message',
        user: user.id,
        text: `Message ${i} in ${channel.name}: the quick brown fox jumps over <@${users[(i + 1) % users.length]!.id}> lazy dog ${i % 97}`,
        ts,
      };
      if (repliesLeft > 0 && threadTs) {
        m.thread_ts = threadTs;
        m.parent_user_id = users[0]!.id;
        repliesLeft--;
        out.replies++;
      } else if (i % 10 === 0) {
        m.thread_ts = ts;
        m.reply_count = 3;
        threadTs = ts;
        repliesLeft = 3;
      }
      if (i % 7 === 0) {
        m.reactions = [{ name: '+1', users: [users[i % users.length]!.id], count: 1 }];
        out.reactions++;
      }
      if (i % 50 === 0) {
        m.files = [{ id: `F${c}x${i}`, name: `file-${i}.txt`, url_private: `https://files.example/${c}/${i}` }];
        out.files++;
      }
      day.push(m);
      out.messages++;
      if (day.length === PER_DAY) flush();
    }
    flush();
  }
  return out;
}

/** Zips a folder as Slack does (every file under the archive's root). */
export async function zipFolder(dir: string, zipFile: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else zip.addFile(path.join(dir, rel), rel);
    }
  };
  walk('');
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const stream = fs.createWriteStream(zipFile);
    zip.outputStream.pipe(stream).on('close', resolve).on('error', reject);
  });
}
