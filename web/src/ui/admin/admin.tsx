import { useEffect, useState } from 'preact/hooks';

import {
  AUDIT_LOG,
  BLOCK_IP,
  BLOCK_PRINCIPAL,
  CREATE_INSTANCE_INVITE,
  INSTANCE_INVITES,
  INSTANCE_REPORTS,
  INSTANCE_RESOLVE,
  IP_BLOCKS,
  PRINCIPAL_BLOCKS,
  UNBLOCK_IP,
  UNBLOCK_PRINCIPAL,
} from '../../api/admin-queries.ts';
import { gql, gqlBatch } from '../../api/graphql.ts';
import { me } from '../../state/store.ts';
import { pageTitle } from '../../state/view.ts';
import { ErrorText, showInfo } from '../toasts.tsx';
import { ReportList, type Report } from '../workspace/report-list.tsx';

import { ActivityChart } from './activity-chart.tsx';
import { PageTabs } from '../page-tabs.tsx';

const TABS: [string, string][] = [
  ['reports', 'Reports'],
  ['blocks', 'Blocked accounts'],
  ['addresses', 'Blocked addresses'],
  ['audit', 'Audit log'],
  ['invites', 'Instance invites'],
];

interface PrincipalBlock {
  principalId: string;
  kind: string;
  reason: string | null;
  cascade: boolean;
  createdAt: string;
  createdBy: string;
  username: string | null;
}
interface IpBlock {
  cidr: string;
  reason: string | null;
  createdAt: string;
  expiresAt: string | null;
  createdBy: string;
}

/** The instance operator's screens: abuse reports, blocks, the audit log, instance invites. */
export default function Admin({ tab }: { tab: string }) {
  const current = TABS.some(([id]) => id === tab) ? tab : 'reports';
  useEffect(() => {
    pageTitle.value = 'Server administration';
  }, []);
  if (!me.value?.instanceOperator) {
    return (
      <section class="page">
        <h1>Server administration</h1>
        <p>Only the server’s operators see this page.</p>
      </section>
    );
  }
  return (
    <section class="page" aria-labelledby="admin-h">
      <h1 id="admin-h">Server administration</h1>
      <PageTabs
        label="Administration sections"
        tabs={TABS}
        current={current}
        route={(tab) => ({ name: 'admin', tab })}
        href={(tab) => `/admin/${tab}`}
      />
      {current === 'reports' && <Reports />}
      {current === 'blocks' && <Blocks />}
      {current === 'addresses' && <Addresses />}
      {current === 'audit' && <Audit />}
      {current === 'invites' && <Invites />}
    </section>
  );
}

function Reports() {
  const [data, setData] = useState<{
    reports: Report[];
    blocks: PrincipalBlock[];
    ips: IpBlock[];
  } | null>(null);
  const [openOnly, setOpenOnly] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const load = async () => {
    try {
      const [r, b, i] = await gqlBatch([
        { query: INSTANCE_REPORTS, variables: { openOnly: false } },
        { query: PRINCIPAL_BLOCKS },
        { query: IP_BLOCKS },
      ]);
      for (const x of [r, b, i]) if (x && 'error' in x) throw x.error;
      setData({
        reports: (r as { data: { instanceReports: Report[] } }).data.instanceReports,
        blocks: (b as { data: { instancePrincipalBlocks: PrincipalBlock[] } }).data
          .instancePrincipalBlocks,
        ips: (i as { data: { instanceIpBlocks: IpBlock[] } }).data.instanceIpBlocks,
      });
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    void load();
  }, []);
  if (!data) return error ? <ErrorText error={error} /> : <p class="loading">Loading…</p>;
  const shown = data.reports.filter((r) => !openOnly || !r.resolved).reverse();
  return (
    <>
      <ActivityChart
        series={[
          { label: 'Reports', times: data.reports.map((r) => r.createdAt), cls: 'series-a' },
          {
            label: 'Blocks',
            times: [...data.blocks.map((b) => b.createdAt), ...data.ips.map((b) => b.createdAt)],
            cls: 'series-b',
          },
        ]}
      />
      <label class="check">
        <input
          type="checkbox"
          checked={openOnly}
          onChange={(e) => setOpenOnly(e.currentTarget.checked)}
        />
        <span>Open reports only</span>
      </label>
      <ErrorText error={error} />
      <ReportList
        reports={shown}
        empty="No reports."
        resolve={(id) => gql(INSTANCE_RESOLVE, { id }).then(load)}
        extra={(r) => {
          const account = r.snapshot.authorId ?? r.snapshot.userId;
          if (!account) return null;
          return (
            <button
              type="button"
              class="danger"
              onClick={() => {
                const reason = prompt(
                  `Block @${r.subjectUsername ?? 'this account'}? Reason (optional):`,
                );
                if (reason === null) return;
                gql(BLOCK_PRINCIPAL, { id: `user:${account}`, reason: reason || null })
                  .then(() => showInfo('Blocked.'))
                  .then(load)
                  .catch(setError);
              }}
            >
              Block the account
            </button>
          );
        }}
      />
    </>
  );
}

function Blocks() {
  const [list, setList] = useState<PrincipalBlock[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    gql<{ instancePrincipalBlocks: PrincipalBlock[] }>(PRINCIPAL_BLOCKS)
      .then((d) => setList(d.instancePrincipalBlocks))
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql<{ instanceBlockPrincipal: { sessionsEnded: number; messagesRemoved: number } }>(
            BLOCK_PRINCIPAL,
            {
              id: String(f.get('principal')).trim(),
              reason: String(f.get('reason') ?? '').trim() || null,
              cascade: f.get('cascade') === 'on',
            },
          )
            .then((d) => {
              const x = d.instanceBlockPrincipal;
              showInfo(
                `Blocked: ${x.sessionsEnded} session(s) ended, ${x.messagesRemoved} message(s) removed.`,
              );
              return load();
            })
            .catch(setError);
        }}
      >
        <h2>Block an account, key or server</h2>
        <label>
          Principal (<code>user:&lt;id&gt;</code>, <code>key:&lt;kid&gt;</code>,{' '}
          <code>server:&lt;host&gt;</code> or <code>remote:&lt;name&gt;@&lt;host&gt;</code>)
          <input name="principal" required />
        </label>
        <label>
          Reason (optional)
          <input name="reason" maxLength={500} dir="auto" />
        </label>
        <label class="check">
          <input type="checkbox" name="cascade" />
          <span>Also remove what it posted and the workspaces it owns</span>
        </label>
        <button type="submit" class="danger">
          Block
        </button>
      </form>
      <ErrorText error={error} />
      <h2>Blocked</h2>
      {!list ? (
        <p class="loading">Loading…</p>
      ) : !list.length ? (
        <p class="hint">Nothing is blocked.</p>
      ) : (
        <ul class="plain">
          {list.map((b) => (
            <li key={b.principalId}>
              <code>{b.principalId}</code>
              {b.username && <> (@{b.username})</>} · {new Date(b.createdAt).toLocaleString()}
              {b.reason && <span dir="auto"> · {b.reason}</span>}{' '}
              <button
                type="button"
                onClick={() =>
                  void gql(UNBLOCK_PRINCIPAL, { id: b.principalId }).then(load).catch(setError)
                }
              >
                Unblock
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Addresses() {
  const [list, setList] = useState<IpBlock[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    gql<{ instanceIpBlocks: IpBlock[] }>(IP_BLOCKS)
      .then((d) => setList(d.instanceIpBlocks))
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const days = Number(f.get('days'));
          gql(BLOCK_IP, {
            cidr: String(f.get('cidr')).trim(),
            reason: String(f.get('reason') ?? '').trim() || null,
            days: days > 0 ? days : null,
          })
            .then(load)
            .catch(setError);
        }}
      >
        <h2>Block an address or range</h2>
        <label>
          Address or CIDR range (IPv4 or IPv6)
          <input name="cidr" required placeholder="203.0.113.0/24" />
        </label>
        <label>
          Reason (optional)
          <input name="reason" maxLength={500} dir="auto" />
        </label>
        <label>
          Days until it lifts (0 = never)
          <input name="days" type="number" min={0} max={36500} defaultValue="0" />
        </label>
        <button type="submit" class="danger">
          Block
        </button>
      </form>
      <ErrorText error={error} />
      <h2>Blocked addresses</h2>
      {!list ? (
        <p class="loading">Loading…</p>
      ) : !list.length ? (
        <p class="hint">No address is blocked.</p>
      ) : (
        <ul class="plain">
          {list.map((b) => (
            <li key={b.cidr}>
              <code>{b.cidr}</code> ·{' '}
              {b.expiresAt ? `until ${new Date(b.expiresAt).toLocaleString()}` : 'no end'}
              {b.reason && <span dir="auto"> · {b.reason}</span>}{' '}
              <button
                type="button"
                onClick={() => void gql(UNBLOCK_IP, { cidr: b.cidr }).then(load).catch(setError)}
              >
                Unblock
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

interface AuditEntry {
  id: string;
  kind: string;
  action: string;
  actorId: string;
  target: string;
  reason: string | null;
  details: string | null;
  createdAt: string;
}

function Audit() {
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const more = (before?: string) =>
    gql<{ instanceAuditLog: { entries: AuditEntry[]; nextCursor: string | null } }>(AUDIT_LOG, {
      before,
    })
      .then((d) => {
        setEntries((e) => [...e, ...d.instanceAuditLog.entries]);
        setNext(d.instanceAuditLog.nextCursor);
      })
      .catch(setError);
  useEffect(() => {
    void more();
  }, []);
  return (
    <>
      <ErrorText error={error} />
      <table class="audit">
        <caption class="visually-hidden">Audit log, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">By</th>
            <th scope="col">Target</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td>{new Date(e.createdAt).toLocaleString()}</td>
              <td>{e.action}</td>
              <td>
                <code>{e.actorId}</code>
              </td>
              <td>
                <code>{e.target}</code>
              </td>
              <td dir="auto">{e.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {next === undefined && <p class="loading">Loading…</p>}
      {next && (
        <button type="button" onClick={() => void more(next)}>
          Older entries
        </button>
      )}
    </>
  );
}

interface InstanceInvite {
  id: string;
  email: string | null;
  createdAt: string;
  expiresAt: string | null;
  maxUses: number;
  uses: number;
  revokedAt: string | null;
}

function Invites() {
  const [list, setList] = useState<InstanceInvite[] | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    gql<{ instanceInvites: InstanceInvite[] }>(INSTANCE_INVITES)
      .then((d) => setList(d.instanceInvites))
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql<{ createInstanceInvite: { token: string } }>(CREATE_INSTANCE_INVITE, {
            email: String(f.get('email') ?? '').trim() || null,
            days: Number(f.get('days')),
            uses: Number(f.get('uses')),
          })
            .then((d) => {
              setToken(d.createInstanceInvite.token);
              return load();
            })
            .catch(setError);
        }}
      >
        <h2>Invite people to create an account</h2>
        <label>
          Email (optional: binds the invite to it and mails it)
          <input name="email" type="email" />
        </label>
        <label>
          Days valid
          <input name="days" type="number" min={1} max={365} defaultValue="7" />
        </label>
        <label>
          Uses
          <input name="uses" type="number" min={1} max={1000} defaultValue="1" />
        </label>
        <button type="submit" class="primary">
          Create invite
        </button>
      </form>
      <ErrorText error={error} />
      {token && (
        <p role="status">
          Invite code (shown once): <code>{token}</code>
        </p>
      )}
      {list && (
        <ul class="plain">
          {list.map((i) => (
            <li key={i.id}>
              {i.email ?? 'Anyone'} · used {i.uses} of {i.maxUses}
              {i.expiresAt && ` · until ${new Date(i.expiresAt).toLocaleDateString()}`}
              {i.revokedAt && ' · revoked'}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
