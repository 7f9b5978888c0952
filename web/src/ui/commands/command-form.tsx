import { useEffect, useRef, useState } from 'preact/hooks';

import { ApiError } from '../../api/graphql.ts';
import type { CommandArgument, Conversation } from '../../api/types.ts';
import { ErrorText } from '../toasts.tsx';

import { runCommand, runMacro } from './run.ts';
import type { SlashTarget } from './slash.ts';

const PLACEHOLDER: Record<string, string> = {
  USER: '@username',
  DURATION: '10m, 2h, 1d or 1w',
  CHANNEL: 'channel id',
  MESSAGE: 'message id',
};

/**
 * The arguments of a command (or the parameters of a macro) by name, one labelled field each
 * with its description, above the message box; Run sends them as `args`. An argument the server
 * refuses is marked and focused, with the server's words by the box.
 */
export function CommandForm(p: { target: SlashTarget; c: Conversation; onClose: () => void }) {
  const { target, c } = p;
  const name = target.kind === 'command' ? target.command.name : target.macro.name;
  const fields: CommandArgument[] =
    target.kind === 'command'
      ? target.command.arguments
      : target.macro.params.map((param) => ({
          name: param,
          type: 'STRING',
          description: '',
          required: true,
        }));
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    form.current?.querySelector<HTMLElement>('input, textarea, button[type=submit]')?.focus();
  }, [name]);
  const invalid =
    error instanceof ApiError && typeof error.extensions.argument === 'string'
      ? error.extensions.argument
      : null;
  useEffect(() => {
    if (invalid) form.current?.querySelector<HTMLElement>(`[name="${invalid}"]`)?.focus();
  }, [error]);

  const run = async () => {
    const args: Record<string, unknown> = {};
    for (const f of fields) {
      const v = values[f.name];
      if (v === undefined || v === '') continue;
      args[f.name] = v;
    }
    setBusy(true);
    setError(null);
    try {
      const context = { serverId: c.serverId, conversationId: c.id };
      const done =
        target.kind === 'command'
          ? await runCommand({
              command: name,
              plugin: target.command.source.workspacePluginId,
              args,
              context,
            })
          : await runMacro(target.macro, args, context, 'USER');
      if (done) p.onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const id = (f: string) => `cmd-${name}-${f}`;
  return (
    <form
      ref={form}
      class="command-form"
      aria-label={`Run /${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          p.onClose();
        }
      }}
    >
      <p class="command-form-head">
        <strong>/{name}</strong>{' '}
        <span class="muted">
          {target.kind === 'command' ? target.command.description : target.macro.description}
        </span>
      </p>
      {fields.map((f) => (
        <div class="command-field" key={f.name}>
          {f.type === 'BOOLEAN' ? (
            <label class="check">
              <input
                type="checkbox"
                name={f.name}
                checked={values[f.name] === true}
                onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.checked })}
              />
              <span>{f.name}</span>
            </label>
          ) : (
            <>
              <label for={id(f.name)}>
                {f.name}
                {f.required ? '' : ' (optional)'}
              </label>
              <input
                id={id(f.name)}
                name={f.name}
                type="text"
                inputMode={
                  f.type === 'INTEGER' ? 'numeric' : f.type === 'NUMBER' ? 'decimal' : 'text'
                }
                autoComplete={f.type === 'SECRET' ? 'off' : undefined}
                aria-required={f.required}
                placeholder={PLACEHOLDER[f.type]}
                aria-invalid={invalid === f.name ? true : undefined}
                aria-describedby={f.description ? `${id(f.name)}-hint` : undefined}
                value={String(values[f.name] ?? '')}
                onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}
              />
            </>
          )}
          {f.description && (
            <span class="hint" id={`${id(f.name)}-hint`}>
              {f.description}
            </span>
          )}
        </div>
      ))}
      <ErrorText error={error} />
      <div class="buttons">
        <button type="button" onClick={p.onClose}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          Run /{name}
        </button>
      </div>
    </form>
  );
}
