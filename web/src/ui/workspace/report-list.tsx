import type { ComponentChildren } from 'preact';

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
    authorId: string | null;
    userId: string | null;
    authorUsername: string | null;
    username: string | null;
    workspaceName: string | null;
    messageCreatedAt: string | null;
  };
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
          {r.snapshot.text && <blockquote dir="auto">{r.snapshot.text}</blockquote>}
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
