import { useEffect, useState } from 'preact/hooks';

import {
  CREATE_MACRO,
  DELETE_KEYBIND,
  DELETE_MACRO,
  COMMAND_LIST_PAGE,
  KEYBINDS,
  SET_KEYBIND,
} from '../../api/command-queries.ts';
import { ApiError, gql } from '../../api/graphql.ts';
import { readAll } from '../../api/paged.ts';
import type { Keybind, Macro, MacroStep } from '../../api/types.ts';
import { commandListChanges } from '../../state/command-lists.ts';
import { conversations } from '../../state/store.ts';
import { lastConversation } from '../../state/view.ts';
import { chordOf, chordWords, clashOf } from '../commands/chords.ts';
import { keybinds, loadKeybinds } from '../commands/keybinds.ts';
import { PluginKeybindList } from '../commands/plugin-keybind-list.tsx';
import { runMacro } from '../commands/run.ts';
import { forgetMacroLists, readMacros } from '../commands/slash.ts';
import { confirmAction } from '../confirm.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

// Settings → Commands: the person's macros (named runs of commands) and keybinds (key chords
// that run a command or a macro anywhere in the app), docs/commands.md. The workspace dialog's
// Commands tab shows the same for a workspace's defaults: every member sees them, its staff
// (`macro:manage`, `keybind:manage`) change them.

/** Whose macros and keybinds a list shows: the person's own, or a workspace's defaults. */
export interface CommandScope {
  /** The workspace, or null for the person's own. */
  serverId: string | null;
  /** Whether the person may change them (always for their own). */
  canManage: boolean;
}

const MINE: CommandScope = { serverId: null, canManage: true };

/** `/topic topic="Release day"`: a step as one line, arguments by name. */
export function stepLine(s: MacroStep): string {
  const args = Object.entries(s.args ?? {}).map(([k, v]) => {
    const t = typeof v === 'string' ? v : JSON.stringify(v);
    return `${k}=${/[\s"]/.test(t) || t === '' ? JSON.stringify(t) : t}`;
  });
  return [`/${s.command}`, ...args].join(' ');
}

/** The reverse of `stepLine`; a line without `/name` is refused in words. */
export function parseStep(line: string, n: number): MacroStep {
  const m = /^\/([a-z0-9-]+)\s*(.*)$/.exec(line.trim());
  if (!m) {
    throw new ApiError(
      `step ${n} must start with a command's name; write it like /shrug text=hello`,
      'VALIDATION',
    );
  }
  const args: Record<string, unknown> = {};
  const re = /([A-Za-z][\w]*)=("(?:[^"\\]|\\.)*"|\S+)/g;
  for (let a = re.exec(m[2] ?? ''); a; a = re.exec(m[2] ?? '')) {
    const raw = a[2] ?? '';
    args[a[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return { command: m[1]!, plugin: null, args };
}

/**
 * The macros of a scope (the workspace's list also holds the person's own: they are dropped),
 * read again when a workspace's list changes elsewhere.
 */
function useMacros(scope: CommandScope) {
  const changes = commandListChanges.value;
  const [macros, setMacros] = useState<Macro[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = () =>
    readMacros(scope.serverId)
      .then((list) => {
        setMacros(list.filter((m) => m.serverId === scope.serverId));
        forgetMacroLists();
      })
      .catch(setError);
  useEffect(() => {
    void reload();
  }, [scope.serverId, changes]);
  return { macros, reload, error };
}

export function CommandSettings() {
  const { macros, reload, error } = useMacros(MINE);
  const [keysError, setKeysError] = useState<unknown>(null);
  useEffect(() => {
    void loadKeybinds().catch(setKeysError);
  }, []);
  return (
    <>
      <h2>Commands</h2>
      <p class="hint">
        Type <kbd>/</kbd> in a message box to run a command or a macro there. A workspace’s own
        macros and keybinds are in its dialog’s Commands tab (from Members in the conversation
        list).
      </p>
      <ErrorText error={error ?? keysError} />
      <Macros scope={MINE} macros={macros} reload={reload} />
      <Keybinds scope={MINE} macros={macros ?? []} />
    </>
  );
}

/** The workspace dialog's Commands tab: the workspace's macros and default keybinds. */
export function WorkspaceCommands(p: { serverId: string; canManage: boolean }) {
  const scope = { serverId: p.serverId, canManage: p.canManage };
  const { macros, reload, error } = useMacros(scope);
  return (
    <>
      <p class="hint">
        Every member of this workspace may run its macros from a message box with <kbd>/</kbd>, and
        its keybinds work for everyone here (a person’s own keybind of the same keys wins).
        {p.canManage ? '' : ' Moderators and the owner change them.'}
      </p>
      <ErrorText error={error} />
      <Macros scope={scope} macros={macros} reload={reload} />
      <Keybinds scope={scope} macros={macros ?? []} />
      <PluginKeybindList />
    </>
  );
}

function Macros(p: {
  scope: CommandScope;
  macros: Macro[] | null;
  reload: () => Promise<unknown>;
}) {
  const [editing, setEditing] = useState<Macro | 'new' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const last = lastConversation.value ? conversations.value[lastConversation.value] : undefined;
  // A workspace's macro runs in that workspace only.
  const conv = p.scope.serverId && last?.serverId !== p.scope.serverId ? undefined : last;
  const workspace = p.scope.serverId !== null;
  const remove = async (m: Macro) => {
    if (!(await confirmAction({ title: `Delete /${m.name}?`, confirm: 'Delete' }))) return;
    await gql(DELETE_MACRO, { id: m.id }).then(p.reload).catch(setError);
  };
  const run = (m: Macro) => {
    if (!conv) return;
    const args = Object.fromEntries(m.params.map((x) => [x, '']));
    runMacro(m, args, { serverId: conv.serverId, conversationId: conv.id }, 'USER').catch(setError);
  };
  return (
    <section aria-labelledby="macros-h">
      <h3 id="macros-h">{workspace ? 'Workspace macros' : 'My macros'}</h3>
      <ErrorText error={error} />
      {p.macros?.length === 0 && <p class="hint">No macros yet.</p>}
      <ul class="plain rule-list">
        {p.macros?.map((m) => (
          <li key={m.id}>
            <span>
              <strong>/{m.name}</strong> {m.description}
              <span class="muted small"> · {m.steps.map(stepLine).join(' · ')}</span>
            </span>
            <button
              type="button"
              disabled={!conv || m.params.length > 0}
              title={
                m.params.length
                  ? 'Has parameters: run it from a message box with /'
                  : 'Runs in the conversation you opened last'
              }
              onClick={() => run(m)}
            >
              Run /{m.name}
            </button>
            {p.scope.canManage && (
              <>
                <button type="button" onClick={() => setEditing(m)}>
                  Edit /{m.name}
                </button>
                <button type="button" onClick={() => void remove(m)}>
                  Delete /{m.name}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {!p.scope.canManage ? null : editing ? (
        <MacroForm
          serverId={p.scope.serverId}
          macro={editing === 'new' ? null : editing}
          done={() => {
            setEditing(null);
            void p.reload();
          }}
        />
      ) : (
        <button type="button" onClick={() => setEditing('new')}>
          New macro
        </button>
      )}
    </section>
  );
}

function MacroForm(p: { serverId: string | null; macro: Macro | null; done: () => void }) {
  const m = p.macro;
  const [name, setName] = useState(m?.name ?? '');
  const [description, setDescription] = useState(m?.description ?? '');
  const [params, setParams] = useState(m?.params.join(', ') ?? '');
  const [steps, setSteps] = useState(m?.steps.map(stepLine).join('\n') ?? '');
  const [error, setError] = useState<unknown>(null);
  const save = async () => {
    setError(null);
    try {
      const input = {
        serverId: p.serverId,
        name: name.trim(),
        description: description.trim() || null,
        params: params
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
        steps: steps
          .split('\n')
          .filter((l) => l.trim())
          .map((l, i) => parseStep(l, i + 1)),
      };
      // The API has no update: an edit makes the new macro first, then removes the old one
      // (under another name both exist for a moment; under the same name the old goes first).
      if (m && m.name === input.name) await gql(DELETE_MACRO, { id: m.id });
      try {
        await gql(CREATE_MACRO, { input });
      } catch (err) {
        if (m && m.name === input.name) {
          await gql(CREATE_MACRO, {
            input: {
              serverId: p.serverId,
              name: m.name,
              description: m.description,
              params: m.params,
              steps: m.steps,
            },
          }).catch(() => undefined);
        }
        throw err;
      }
      if (m && m.name !== input.name) await gql(DELETE_MACRO, { id: m.id });
      showInfo(m ? `Saved /${input.name}.` : `Made /${input.name}.`);
      p.done();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form
      class="form"
      aria-label={m ? `Edit /${m.name}` : 'New macro'}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label for="macro-name">Name</label>
      <input id="macro-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="macro-description">Description (optional)</label>
      <input
        id="macro-description"
        value={description}
        onInput={(e) => setDescription(e.currentTarget.value)}
      />
      <label for="macro-params">Parameters (optional, separated by commas)</label>
      <input id="macro-params" value={params} onInput={(e) => setParams(e.currentTarget.value)} />
      <label for="macro-steps">Steps, one command a line</label>
      <textarea
        id="macro-steps"
        rows={4}
        value={steps}
        aria-describedby="macro-steps-hint"
        onInput={(e) => setSteps(e.currentTarget.value)}
      />
      <p class="hint" id="macro-steps-hint">
        Like <code>/topic topic="Release day"</code> or <code>/me text={'{{what}}'}</code>:
        arguments by name, <code>{'{{parameter}}'}</code> for a parameter's value.
      </p>
      <ErrorText error={error} />
      <div class="buttons">
        <button type="button" onClick={p.done}>
          Cancel
        </button>
        <button type="submit" class="primary">
          {m ? 'Save macro' : 'Make macro'}
        </button>
      </div>
    </form>
  );
}

function Keybinds(p: { scope: CommandScope; macros: Macro[] }) {
  const [chord, setChord] = useState<string | null>(null);
  const [kind, setKind] = useState('command');
  const [target, setTarget] = useState('');
  const [args, setArgs] = useState('');
  const [error, setError] = useState<unknown>(null);
  const serverId = p.scope.serverId;
  // The person's own are in the app's list; a workspace's are read for this tab (the app's
  // list holds only the defaults of the workspace on screen).
  const [defaults, setDefaults] = useState<Keybind[]>([]);
  const reload = async () => {
    await loadKeybinds();
    if (!serverId) return;
    const all = await readAll<Keybind & { cursor: string }>(
      KEYBINDS,
      'keybinds',
      { serverId },
      COMMAND_LIST_PAGE,
    );
    setDefaults(all.filter((k) => k.serverId === serverId));
  };
  const changes = commandListChanges.value;
  useEffect(() => {
    if (serverId) void reload().catch(setError);
  }, [serverId, changes]);
  const shown = serverId ? defaults : keybinds.value.filter((k) => k.ownerId);
  const clash = chord ? clashOf(chord) : null;
  const save = async () => {
    if (!chord || clash) return;
    setError(null);
    try {
      const macro = p.macros.find((m) => m.id === kind);
      const step = macro ? null : parseStep(`/${target.trim().replace(/^\//, '')} ${args}`, 1);
      await gql(SET_KEYBIND, {
        input: macro
          ? { serverId, chord, macroId: macro.id, args: {} }
          : { serverId, chord, command: step!.command, args: step!.args },
      });
      await reload();
      showInfo(`${chordWords(chord)} is bound.`);
      setChord(null);
      setTarget('');
      setArgs('');
      setKind('command');
    } catch (err) {
      setError(err);
    }
  };
  const remove = (k: Keybind) =>
    gql(DELETE_KEYBIND, { id: k.id })
      .then(() => reload())
      .catch(setError);
  const what = (k: Keybind) =>
    k.command
      ? stepLine({ command: k.command, plugin: null, args: k.args })
      : `/${p.macros.find((m) => m.id === k.macroId)?.name ?? 'a macro'}`;
  return (
    <section aria-labelledby="keybinds-h">
      <h3 id="keybinds-h">{serverId ? 'Workspace keybinds' : 'My keybinds'}</h3>
      {shown.length === 0 && <p class="hint">No keybinds yet.</p>}
      <ErrorText error={p.scope.canManage ? null : error} />
      <ul class="plain rule-list">
        {shown.map((k) => (
          <li key={k.id}>
            <span>
              <kbd>{chordWords(k.chord)}</kbd> runs <code>{what(k)}</code>
            </span>
            {p.scope.canManage && (
              <button type="button" onClick={() => void remove(k)}>
                Remove {chordWords(k.chord)}
              </button>
            )}
          </li>
        ))}
      </ul>
      {p.scope.canManage && (
        <form
          class="form"
          aria-label="New keybind"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <label for="chord-input">Keys</label>
          <input
            id="chord-input"
            readOnly
            value={chord ? chordWords(chord) : ''}
            placeholder="Focus here and press the keys"
            aria-describedby="chord-hint"
            aria-invalid={clash ? true : undefined}
            onKeyDown={(e) => {
              if (e.key === 'Tab' && !e.ctrlKey && !e.metaKey && !e.altKey) return;
              const c = chordOf(e);
              if (!c) return;
              e.preventDefault();
              e.stopPropagation();
              setChord(c);
            }}
          />
          <p class="hint" id="chord-hint" role={clash ? 'alert' : undefined}>
            {clash ?? 'Chords the browser or this app uses already are refused.'}
          </p>
          <label for="keybind-kind">Runs</label>
          <select id="keybind-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="command">A command</option>
            {p.macros.map((m) => (
              <option key={m.id} value={m.id}>
                The macro /{m.name}
              </option>
            ))}
          </select>
          {kind === 'command' && (
            <>
              <label for="keybind-target">Command</label>
              <input
                id="keybind-target"
                value={target}
                placeholder="/away"
                onInput={(e) => setTarget(e.currentTarget.value)}
              />
              <label for="keybind-args">Arguments (optional, name=value)</label>
              <input
                id="keybind-args"
                value={args}
                onInput={(e) => setArgs(e.currentTarget.value)}
              />
            </>
          )}
          <ErrorText error={error} />
          <div class="buttons">
            <button
              type="submit"
              class="primary"
              disabled={!chord || !!clash || (kind === 'command' && !target.trim())}
            >
              Bind keys
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
