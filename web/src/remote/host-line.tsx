import { explainLine } from '../api/errors.ts';

import { hostOfId } from './routing.ts';
import { remoteProblems } from './spaces.ts';

/** Under a workspace's name: the server that hosts it, and why it cannot be reached, if so. */
export function RemoteHostLine({ serverId }: { serverId: string }) {
  const host = hostOfId(serverId);
  if (!host) return null;
  const problem = remoteProblems.value[host];
  return (
    <>
      <p class="remote-host">Hosted on {host}</p>
      {problem && (
        <p class="notice" role="alert">
          {explainLine(problem)}
        </p>
      )}
    </>
  );
}
