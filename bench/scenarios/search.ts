import crypto from 'node:crypto';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import pg from 'pg';

import { analyzeText } from '../../src/services/search/analyze.js';
import { termsMatch } from '../../src/services/search/match-queries.js';
import { parseQuery } from '../../src/services/search/query-grammar.js';
import { gql, signup, type Session } from '../lib/client.js';
import { cpuSeconds, percentile, postgresCpuSeconds } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { createBackend, startSvc, type Backend } from '../lib/svc.js';

import type { Options } from './fanout.js';

// Bench scenario `search` (issue 19, docs/search.md "Scale"): MESSAGES generated messages in six
// languages, in ten channels of one workspace, written straight into the database in bulk with
// their index rows (the server's own tokenizer makes the terms, as a send would), then searches
// through the GraphQL API one at a time, and sends with and without index work.
// BENCH_SEARCH_MESSAGES sets the count (default 1,000,000); BENCH_SEARCH_KEEP=1 keeps the database.

const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
const CHANNELS = 10;
const SEARCHES = 200;
const SEND_SECONDS = Number(process.env.BENCH_SEARCH_SEND_SECONDS ?? 5);
/** Rounds of sends with and without index work, each pair one after the other. */
const SEND_ROUNDS = Number(process.env.BENCH_SEARCH_SEND_ROUNDS ?? 3);
const SEND_CLIENTS = 8;
/** The planted rare word: in RARE_EVERY-th message only. */
const RARE = 'zircon42';
const RARE_EVERY = 50_000;

/** The searches timed, and how many messages hold every term of each (counted while generating). */
const QUERIES: Array<{
  kind: string;
  q: string;
  match: ReturnType<typeof parseQuery>;
  matches: number;
}> = [
  ['rare term', RARE],
  ['common term', 'the'],
  ['inflected term', 'reports'],
  ['CJK bigram', '東京'],
  ['two-term AND', 'review plan'],
  ['two rarer terms AND', 'budget friday'],
  ['phrase', '"review plan"'],
  ['prefix', 'deplo*'],
  ['operator combination', 'report in:#c3 after:2020-01-01 -draft'],
].map(([kind, q]) => ({
  kind: kind as string,
  q: q as string,
  match: parseQuery(q as string),
  matches: 0,
}));

const SEARCH = `query($q: String!) { searchMessages(query: $q, limit: 20) {
  items { message { id } highlights { start length } } hasMore } }`;

/** Deterministic pseudo-random numbers (mulberry32), so every run indexes the same text. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = {
  en: 'the report meeting review plan deploy release budget team please update before after friday monday customer issue fixed server design draft notes call tomorrow today ready thanks question answer check build test data week month quarter'.split(
    ' ',
  ),
  fr: 'le la les réunion café crème équipe projet demain aujourd hui élève sécurité données serveur problème réglé merci prêt semaine mois été noël à où déjà'.split(
    ' ',
  ),
  de: 'die der das Straße Größe über Besprechung Bericht morgen heute Kunde Fehler behoben Server Woche Monat fertig danke prüfen Entwurf Team'.split(
    ' ',
  ),
  ja: '東京都に行く 京都の紅葉 会議の資料 来週の予定 データベース サーバーを再起動 確認お願いします 明日 今日は晴れ 新しいリリース 報告書 修正しました'.split(
    ' ',
  ),
  zh: '我明天去北京大学开会 北京的天气 资料库的效能很好 南京大学 这个问题已经修复 请检查服务器 下周的计划 報告已經準備好 臺灣 会议记录'.split(
    ' ',
  ),
  ko: '서울에서 친구를 만났어요 부산에서 서울까지 회의 자료 내일 오늘 서버를 확인해 주세요 보고서 다음 주 계획 고쳤습니다'.split(
    ' ',
  ),
};
const LANGS: Array<[keyof typeof WORDS, number]> = [
  ['en', 0.4],
  ['fr', 0.15],
  ['de', 0.1],
  ['ja', 0.15],
  ['zh', 0.1],
  ['ko', 0.1],
];

/** A message of 4 to 12 words: mostly one language, Zipf-like word choice, a long tail of rare words. */
function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(list: T[]) => list[Math.floor(list.length * r() ** 1.6)] as T;
  return (n: number) => {
    let x = r();
    let lang: keyof typeof WORDS = 'en';
    for (const [l, share] of LANGS) {
      if (x < share) {
        lang = l;
        break;
      }
      x -= share;
    }
    const words: string[] = [];
    const count = 4 + Math.floor(r() * 9);
    for (let i = 0; i < count; i++) {
      const y = r();
      if (y < 0.15) words.push(`w${Math.floor(r() * 200_000).toString(36)}`);
      else if (y < 0.2) words.push(pick(WORDS.en));
      else words.push(pick(WORDS[lang]));
    }
    if (n % RARE_EVERY === 7) words.push(RARE);
    return words.join(' ');
  };
}

/**
 * `text` with every character but spaces replaced by as many hyphens as its UTF-8 bytes: as long
 * in bytes, without a word, and ASCII, which the analysis passes over at once on the event loop
 * (about 1 µs, as a text no server analyzes would cost nothing; CJK punctuation would cost it
 * 19 µs for the same bytes). Until 2026-12-01 every text went to the analysis thread, and the
 * hop there and back (tens of microseconds of CPU, more under load) was charged to these sends
 * too, which flattered the ratio (docs/search.md, "Measured").
 */
function punctuationLike(text: string): string {
  return [...text].map((c) => (c === ' ' ? c : '-'.repeat(Buffer.byteLength(c)))).join('');
}

/** A UUIDv7-shaped id whose time part is `at`, as the server's ids are. */
function idAt(at: number): string {
  const hex = at.toString(16).padStart(12, '0') + crypto.randomBytes(10).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

type SendRun = Awaited<ReturnType<typeof sendRate>>;

interface Place {
  workspaceId: string;
  channels: string[];
  authorId: string;
}

type Row = { id: string; conversationId: string; text: string; createdAt: number; terms: string };

function* rows(place: Place): Generator<Row[]> {
  const next = generator(19);
  const start = Date.now() - 365 * 24 * 3600 * 1000;
  const spacing = Math.floor((365 * 24 * 3600 * 1000) / MESSAGES);
  let batch: Row[] = [];
  for (let n = 0; n < MESSAGES; n++) {
    const text = next(n);
    const createdAt = start + n * spacing;
    const terms = analyzeText(text);
    const joined = terms.join(' ');
    // Index matches only (phrases, channels and dates not checked): how much the index finds.
    for (const query of QUERIES)
      if (terms.length && termsMatch(joined, query.match)) query.matches++;
    batch.push({
      id: idAt(createdAt),
      conversationId: place.channels[n % place.channels.length] as string,
      text,
      createdAt,
      terms: terms.join(' '),
    });
    if (batch.length === 5000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/**
 * The loaders write every index row with the server's analysis, so the rebuild the migrations
 * start on an empty database (`search_backfill`, docs/search.md "Rebuilding") has nothing to do.
 * Left in place, the server's `search-backfill` job would rewrite every loaded row while the
 * searches are timed: its CPU counted in theirs, and on PostgreSQL a dead row behind every live
 * one and a GIN pending list that every search reads.
 */
const NO_BACKFILL = `delete from search_backfill where id = 'messages'`;

async function loadSqlite(backend: Backend, place: Place) {
  const db = new Sqlite(path.join(backend.dataDir, 'svc.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const message = db.prepare(`insert into message (id, "conversationId", "workspaceId", "authorId",
    text, ciphertext, "threadRootId", "forwardedFromId", "createdAt", "editedAt", "deletedAt",
    "deletedBy", "replyCount", "lastReplyAt", mentions)
    values (?, ?, ?, ?, ?, null, null, null, ?, null, null, null, 0, null, null)`);
  // `doc` as the server writes it (match-queries.ts, `timeDoc`): each message here has a
  // millisecond of its own.
  const terms = db.prepare(
    'insert into message_search (doc, "messageId", terms) values (? * 1048576, ?, ?)',
  );
  const write = db.transaction((batch: Row[]) => {
    for (const r of batch) {
      message.run(r.id, r.conversationId, place.workspaceId, place.authorId, r.text, r.createdAt);
      if (r.terms) terms.run(r.createdAt, r.id, r.terms);
    }
  });
  for (const batch of rows(place)) write(batch);
  // The rows above are the current analysis': no rebuild to run (see `NO_BACKFILL`).
  db.exec(NO_BACKFILL);
  const size = db
    .prepare(
      `select sum(pgsize) as bytes from dbstat
       where name like 'message_search%' or name = 'sqlite_autoindex_message_search_1'`,
    )
    .get() as { bytes: number };
  db.close();
  return size.bytes;
}

async function loadPostgres(backend: Backend, place: Place) {
  const client = new pg.Client({ connectionString: backend.env.SVC_DATABASE_URL });
  await client.connect();
  try {
    for (const batch of rows(place)) {
      await client.query('begin');
      await client.query(
        `insert into message (id, "conversationId", "workspaceId", "authorId", text, "createdAt",
           "replyCount")
         select id, c, $3, $4, t, at, 0 from unnest($1::text[], $2::text[], $5::text[], $6::bigint[])
           as x(id, c, t, at)`,
        [
          batch.map((r) => r.id),
          batch.map((r) => r.conversationId),
          place.workspaceId,
          place.authorId,
          batch.map((r) => r.text),
          batch.map((r) => r.createdAt),
        ],
      );
      const indexed = batch.filter((r) => r.terms);
      await client.query(
        `insert into message_search ("messageId", terms) select * from unnest($1::text[], $2::text[])`,
        [indexed.map((r) => r.id), indexed.map((r) => r.terms)],
      );
      await client.query('commit');
    }
    await client.query(NO_BACKFILL);
    await client.query('vacuum analyze message');
    await client.query('vacuum analyze message_search');
    const res = await client.query(`select pg_total_relation_size('message_search') as bytes`);
    return Number(res.rows[0].bytes);
  } finally {
    await client.end();
  }
}

/**
 * SEARCHES searches of `q` one after another: p50 and p99 of their time, and the CPU time a
 * search costs the server (and PostgreSQL), which a busy machine disturbs far less than the
 * latency.
 */
async function timeSearches(base: string, s: Session, q: string, pid: number) {
  for (let i = 0; i < 10; i++) await gql(base, SEARCH, { q }, s);
  const times: number[] = [];
  let hits = 0;
  const cpu0 = cpuSeconds(pid);
  const pg0 = postgresCpuSeconds();
  for (let i = 0; i < SEARCHES; i++) {
    const t = performance.now();
    const res = await gql(base, SEARCH, { q }, s);
    times.push(performance.now() - t);
    hits = res.data.searchMessages.items.length;
  }
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    hits,
    cpuMs: ((cpuSeconds(pid) - cpu0) * 1000) / SEARCHES,
    pgCpuMs: ((postgresCpuSeconds() - pg0) * 1000) / SEARCHES,
  };
}

/**
 * Sends by SEND_CLIENTS clients for SEND_SECONDS, each text in turn (a different text each
 * send, as in a conversation: the server keeps nothing of the last text that a repeat would
 * reuse): messages per second, and the CPU time per send of the server process and of
 * PostgreSQL's (zero on SQLite).
 */
async function sendRate(
  base: string,
  s: Session,
  pid: number,
  channels: string[],
  texts: string[],
) {
  let sent = 0;
  const cpu0 = cpuSeconds(pid);
  const pg0 = postgresCpuSeconds();
  const end = performance.now() + SEND_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: SEND_CLIENTS }, async (_, i) => {
      while (performance.now() < end) {
        const text = texts[sent % texts.length]!;
        sent++;
        await gql(base, SEND, { i: { conversationId: channels[i % channels.length], text } }, s);
      }
    }),
  );
  return {
    rate: sent / SEND_SECONDS,
    cpuMs: ((cpuSeconds(pid) - cpu0) * 1000) / sent,
    pgCpuMs: ((postgresCpuSeconds() - pg0) * 1000) / sent,
  };
}

export async function search(opts: Options): Promise<ScenarioResult> {
  const backend = await createBackend(opts.pg);
  let svc = await startSvc(backend);
  const result: ScenarioResult = {
    scenario: 'search',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows: [],
    targets: [],
    notes: [],
  };
  try {
    const owner = await signup(svc.url, `srch${Date.now().toString(36)}`);
    const ws = await gql(
      svc.url,
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id channels { id } } }',
      { i: { name: 'search bench' } },
      owner,
    );
    const workspaceId = ws.data.createWorkspace.id as string;
    const channels = (ws.data.createWorkspace.channels as Array<{ id: string }>).map((c) => c.id);
    while (channels.length < CHANNELS) {
      const c = await gql(
        svc.url,
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId: workspaceId, name: `c${channels.length}` } },
        owner,
      );
      channels.push(c.data.createChannel.id as string);
    }
    await svc.proc.stop();

    const place = { workspaceId, channels, authorId: owner.userId };
    const loadStart = performance.now();
    const indexBytes = opts.pg
      ? await loadPostgres(backend, place)
      : await loadSqlite(backend, place);
    const loadSeconds = (performance.now() - loadStart) / 1000;
    svc = await startSvc(backend);

    let worst = 0;
    for (const { kind, q, matches } of QUERIES) {
      const r = await timeSearches(svc.url, owner, q, svc.proc.pid);
      worst = Math.max(worst, r.p99);
      result.rows.push({
        measure: `search: ${kind} (${q})`,
        matches,
        page: r.hits,
        p50_ms: r.p50,
        p99_ms: r.p99,
        cpu_ms: Number(r.cpuMs.toFixed(2)),
        ...(opts.pg ? { pg_cpu_ms: Number(r.pgCpuMs.toFixed(2)) } : {}),
      });
    }
    result.rows.push({
      measure: 'index size per message (bytes)',
      value: Math.round(indexBytes / MESSAGES),
    });
    result.rows.push({ measure: 'bulk load (s)', value: loadSeconds });

    // Sends with index work against sends without: the same route, database and lengths of
    // text, once with words (analyzed and written to the index: the generator's messages, a
    // different one each send, numbered so none repeats) and once with punctuation only (no
    // term, so no index row; the analysis's pass remains) of the same UTF-8 length, so the
    // message rows, request bodies and answers are as large.
    const more = generator(7);
    const worded = Array.from({ length: 4096 }, (_, n) => `${more(n)} ${n}`);
    const bare = worded.map(punctuationLike);
    await sendRate(svc.url, owner, svc.proc.pid, channels, worded);
    const runs = { worded: [] as SendRun[], bare: [] as SendRun[] };
    for (let round = 0; round < SEND_ROUNDS; round++) {
      runs.worded.push(await sendRate(svc.url, owner, svc.proc.pid, channels, worded));
      runs.bare.push(await sendRate(svc.url, owner, svc.proc.pid, channels, bare));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(runs.worded.map((r) => r.rate)) / mean(runs.bare.map((r) => r.rate));
    for (const [name, list] of Object.entries(runs)) {
      const label = name === 'worded' ? 'with indexing' : 'without index work';
      result.rows.push({
        measure: `send rate ${label} (msg/s, ${SEND_CLIENTS} clients)`,
        value: Math.round(mean(list.map((r) => r.rate))),
      });
      result.rows.push({
        measure: `server CPU per send ${label} (ms)`,
        value: Number(mean(list.map((r) => r.cpuMs)).toFixed(3)),
      });
      if (opts.pg) {
        result.rows.push({
          measure: `PostgreSQL CPU per send ${label} (ms)`,
          value: Number(mean(list.map((r) => r.pgCpuMs)).toFixed(3)),
        });
      }
    }
    // PostgreSQL's CPU counts only on PostgreSQL (on SQLite it is other work of the machine's).
    const cpuOf = (r: SendRun) => r.cpuMs + (opts.pg ? r.pgCpuMs : 0);
    const cpuRatio = mean(runs.bare.map(cpuOf)) / mean(runs.worded.map(cpuOf));
    result.rows.push({
      measure: 'send rate with indexing / without, by CPU per send (%)',
      value: Math.round(cpuRatio * 100),
    });
    const bytesPerMessage = indexBytes / MESSAGES;
    result.targets.push({
      target: 'search p99 <= 50 ms',
      met: worst <= 50,
      detail: `worst p99 ${worst.toFixed(1)} ms`,
    });
    result.targets.push({
      target: 'send rate with indexing within 15% of without',
      met: ratio >= 0.85,
      detail: `${(ratio * 100).toFixed(0)}% by rate, ${(cpuRatio * 100).toFixed(0)}% by CPU per send`,
    });
    result.targets.push({
      target: 'index <= 350 bytes per message',
      met: bytesPerMessage <= 350,
      detail: `${bytesPerMessage.toFixed(0)} bytes`,
    });
    result.notes!.push(
      `${MESSAGES} messages in ${CHANNELS} channels of one workspace; ${SEARCHES} searches per query, one at a time, through POST /api (page of 20)`,
      // Each round's pair, for the spread a machine's moods give the ratio of their means.
      `send rounds, msg/s with / without index work: ${runs.worded
        .map((w, i) => `${Math.round(w.rate)} / ${Math.round(runs.bare[i]!.rate)}`)
        .join(', ')}`,
    );
  } finally {
    await svc.proc.stop();
    // BENCH_SEARCH_KEEP=1 keeps the loaded database to study plans (printed here).
    if (process.env.BENCH_SEARCH_KEEP) console.log(`kept ${JSON.stringify(backend.env)}`);
    else await backend.drop();
  }
  return result;
}
