import type { User } from '../api/types.ts';
import { hostOfId } from '../remote/routing.ts';

/**
 * People to tick, as a fieldset of labelled checkboxes (keyboard and screen reader friendly): the
 * one picker of the new conversation dialog and of adding people to a group.
 */
export function PeoplePicker(p: {
  legend: string;
  people: readonly User[];
  picked: readonly string[];
  onChange: (picked: string[]) => void;
}) {
  return (
    <fieldset class="people">
      <legend>{p.legend}</legend>
      {p.people.map((u) => (
        <label class="check" key={u.id}>
          <input
            type="checkbox"
            checked={p.picked.includes(u.id)}
            onChange={(e) =>
              p.onChange(
                e.currentTarget.checked ? [...p.picked, u.id] : p.picked.filter((x) => x !== u.id),
              )
            }
          />
          <span dir="auto">{u.displayName ?? u.username}</span>{' '}
          <span class="muted">
            @{u.username}
            {hostOfId(u.id) && `, on ${hostOfId(u.id)}`}
          </span>
        </label>
      ))}
    </fieldset>
  );
}
