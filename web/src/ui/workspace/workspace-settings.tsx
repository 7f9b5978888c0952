import { useEffect, useState } from 'preact/hooks';

import { DELETE_WORKSPACE, TRANSFER_WORKSPACE, UPDATE_WORKSPACE } from '../../api/admin-queries.ts';
import { gql } from '../../api/graphql.ts';
import { MEMBERS } from '../../api/queries.ts';
import type { Workspace, WorkspaceMember } from '../../api/types.ts';
import { navigate } from '../../state/router.ts';
import { unfollow } from '../../state/session.ts';
import { patchWorkspace, workspaces } from '../../state/store.ts';
import { ErrorText, showInfo } from '../toasts.tsx';
import { confirmAction } from '../confirm.tsx';

/** Name and description (owner and Moderators); hand-over and deletion (owner). */
export function WorkspaceSettings({ w, onClose }: { w: Workspace; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [members, setMembers] = useState<WorkspaceMember[]>([]);
  const owner = w.myRole === 'OWNER';
  useEffect(() => {
    if (!owner) return;
    gql<{ workspace: { members: { items: WorkspaceMember[] } } }>(MEMBERS, { serverId: w.id })
      .then((d) =>
        setMembers(
          d.workspace.members.items.filter((m) => m.role !== 'OWNER' && m.role !== 'GUEST'),
        ),
      )
      .catch(setError);
  }, [w.id]);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql<{ updateWorkspace: Workspace }>(UPDATE_WORKSPACE, {
            input: {
              serverId: w.id,
              name: String(f.get('name')).trim(),
              description: String(f.get('description') ?? '').trim(),
            },
          })
            .then((d) => {
              patchWorkspace(w.id, d.updateWorkspace);
              showInfo('Saved.');
            })
            .catch(setError);
        }}
      >
        <label>
          Name
          <input name="name" required maxLength={80} defaultValue={w.name} dir="auto" />
        </label>
        <label>
          Description
          <input
            name="description"
            maxLength={1000}
            defaultValue={w.description ?? ''}
            dir="auto"
          />
        </label>
        <button type="submit" class="primary">
          Save
        </button>
      </form>
      <ErrorText error={error} />
      {owner && (
        <>
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              const userId = String(new FormData(e.currentTarget).get('heir'));
              const yes = await confirmAction({
                title: 'Hand the workspace over?',
                body: 'You become a Moderator.',
                confirm: 'Hand over',
              });
              if (!yes) return;
              gql<{ transferWorkspaceOwnership: Workspace }>(TRANSFER_WORKSPACE, {
                input: { serverId: w.id, userId },
              })
                .then((d) => {
                  patchWorkspace(w.id, d.transferWorkspaceOwnership);
                  showInfo('The workspace has a new owner.');
                  onClose();
                })
                .catch(setError);
            }}
          >
            <h3>Hand the workspace over</h3>
            <label>
              New owner
              <select name="heir" required>
                {members.map((m) => (
                  <option key={m.user.id} value={m.user.id}>
                    {m.user.displayName ?? m.user.username} (@{m.user.username})
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" disabled={!members.length}>
              Hand over
            </button>
          </form>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const confirmName = String(new FormData(e.currentTarget).get('confirm'));
              gql(DELETE_WORKSPACE, { input: { serverId: w.id, confirmName } })
                .then(() => {
                  unfollow(w.id);
                  workspaces.value = workspaces.value.filter((x) => x.id !== w.id);
                  onClose();
                  navigate({ name: 'home' });
                })
                .catch(setError);
            }}
          >
            <h3>Delete the workspace</h3>
            <p class="hint">
              Everything in it — channels, messages, files — is deleted for good, for everyone.
            </p>
            <label>
              Type the workspace’s name to confirm
              <input name="confirm" required dir="auto" />
            </label>
            <button type="submit" class="danger">
              Delete for good
            </button>
          </form>
        </>
      )}
    </>
  );
}
