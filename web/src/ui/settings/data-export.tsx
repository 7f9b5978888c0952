import { useEffect, useState } from 'preact/hooks';

import { MY_DATA_EXPORTS, REQUEST_DATA_EXPORT } from '../../api/admin-queries.ts';
import { gql } from '../../api/graphql.ts';
import { ErrorText } from '../toasts.tsx';

// Settings, Account, "Download your data" (docs/export.md, "Downloading your own data"): asks for
// an export of the account, shows it while it is prepared (asking again every two seconds), then
// offers the archive.

interface DataExport {
  id: string;
  state: 'PREPARING' | 'READY' | 'FAILED';
  requestedAt: string;
  readyAt: string | null;
  expiresAt: string | null;
  sizeBytes: number | null;
  downloadUrl: string | null;
  error: string | null;
}

const size = (n: number) =>
  n < 1024 * 1024
    ? `${Math.max(1, Math.round(n / 1024))} KB`
    : `${(n / 1024 / 1024).toFixed(1)} MB`;

export function DataExportSetting() {
  const [exports, setExports] = useState<DataExport[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    gql<{ myDataExports: DataExport[] }>(MY_DATA_EXPORTS)
      .then((d) => setExports(d.myDataExports))
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);
  const preparing = exports?.some((e) => e.state === 'PREPARING') ?? false;
  useEffect(() => {
    if (!preparing) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [preparing]);
  return (
    <section aria-labelledby="data-export-h">
      <h3 id="data-export-h">Download your data</h3>
      <p class="hint">
        A copy of your account, sessions, workspaces and conversations, the messages you wrote with
        their files, and your reactions, as JSON Lines in a ZIP archive. Messages of encrypted
        conversations are in it as the ciphertext the server holds: only your devices can read them.
        It is made in the background and kept for 7 days.
      </p>
      <ErrorText error={error} />
      <button
        type="button"
        disabled={preparing}
        onClick={() => {
          setError(null);
          gql(REQUEST_DATA_EXPORT).then(load).catch(setError);
        }}
      >
        {preparing ? 'Preparing your data…' : 'Ask for a copy of my data'}
      </button>
      {exports && exports.length > 0 && (
        <ul class="data-exports" aria-live="polite">
          {exports.map((e) => (
            <li key={e.id}>
              Asked for on {new Date(e.requestedAt).toLocaleString()}:{' '}
              {e.state === 'PREPARING' && 'being prepared…'}
              {e.state === 'FAILED' && `failed (${e.error ?? 'unknown reason'})`}
              {e.state === 'READY' && e.downloadUrl && (
                <>
                  <a href={e.downloadUrl} download>
                    Download ({size(e.sizeBytes ?? 0)})
                  </a>
                  {e.expiresAt && `, until ${new Date(e.expiresAt).toLocaleDateString()}`}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
