import type { ComponentChildren } from 'preact';

import { ReportedAttachments } from '../../e2ee/attachment.tsx';
import { Icon } from '../icons.tsx';
import { showError } from '../toasts.tsx';

export interface Report {
  id: string;
  cursor: string;
  subjectKind: 'MESSAGE' | 'USER' | 'WORKSPACE';
  subjectId: string;
  category: string;
  text: string | null;
  createdAt: string;
  resolved: boolean;
  subjectUsername: string | null;
  reporterUsername: string | null;
  serverId: string | null;
  snapshot: {
    text: string | null;
    /** An encrypted message: `text` is the body its reporter revealed (docs/e2ee.md). */
    encrypted: boolean | null;
    frankingVerified: boolean | null;
    authorId: string | null;
    userId: string | null;
    authorUsername: string | null;
    username: string | null;
    workspaceName: string | null;
    messageCreatedAt: string | null;
  };
}

/** The text of an encrypted message's body (`{"text", "files"}`), or the body as it is. */
function bodyText(body: string): string {
  try {
    const v = JSON.parse(body) as { text?: unknown };
    return typeof v.text === 'string' ? v.text : body;
  } catch {
    return body;
  }
}

/**
 * A reported encrypted message: the text its reporter revealed, which the server showed only
 * once it matched the sender's franking commitment, and its files, opened with the revealed keys.
 */
function Revealed({ reportId, body }: { reportId: string; body: string }) {
  return (
    <>
      <blockquote dir="auto">{bodyText(body)}</blockquote>
      <p class="muted small">
        <Icon name="lock" /> End-to-end encrypted: revealed by the reporter and proven to be what
        its sender wrote.
      </p>
      <ReportedAttachments reportId={reportId} body={body} />
    </>
  );
}

/** Reports as a queue: what was reported, why, and a button to resolve each. */
export function ReportList(p: {
  reports: Report[];
  empty: string;
  resolve: (id: string) => Promise<unknown>;
  extra?: (r: Report) => ComponentChildren;
}) {
  if (!p.reports.length) return <p class="hint">{p.empty}</p>;
  return (
    <ul class="plain reports">
      {p.reports.map((r) => (
        <li key={r.id} class={r.resolved ? 'resolved' : ''}>
          <p>
            <strong>{r.category.replace(/_/g, ' ').toLowerCase()}</strong> ·{' '}
            {r.subjectKind.toLowerCase()}
            {r.subjectUsername && <> by @{r.subjectUsername}</>} ·{' '}
            <time dateTime={r.createdAt}>{new Date(r.createdAt).toLocaleString()}</time>
            {r.reporterUsername && <> · reported by @{r.reporterUsername}</>}
          </p>
          {r.snapshot.text && r.snapshot.encrypted ? (
            <Revealed reportId={r.id} body={r.snapshot.text} />
          ) : (
            r.snapshot.text && <blockquote dir="auto">{r.snapshot.text}</blockquote>
          )}
          {r.snapshot.workspaceName && <p dir="auto">Workspace: {r.snapshot.workspaceName}</p>}
          {r.text && (
            <p dir="auto">
              <em>Reporter:</em> {r.text}
            </p>
          )}
          <div class="buttons">
            {!r.resolved && (
              <button type="button" onClick={() => void p.resolve(r.id).catch(showError)}>
                Resolve
              </button>
            )}
            {p.extra?.(r)}
          </div>
        </li>
      ))}
    </ul>
  );
}
