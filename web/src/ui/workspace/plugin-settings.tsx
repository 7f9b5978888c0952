import { useEffect, useState } from 'preact/hooks';

import { gql, postBody } from '../../api/graphql.ts';
import {
  ADD_PLUGIN,
  REMOVE_PLUGIN,
  UPDATE_PLUGIN,
  WORKSPACE_PLUGINS,
} from '../../api/plugin-queries.ts';
import type { PluginSettingSchema, WorkspacePlugin } from '../../api/types.ts';
import { pluginsChanged } from '../../state/plugins.ts';
import { confirmAction } from '../confirm.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

// Workspace settings → Plugins (docs/plugins.md): the registry of the workspace's plugins for
// its Moderators and owner. A bundle is uploaded as itself, then added (or, for a plugin the
// registry has, the entry moves to it); each entry is enabled, disabled, set up through a form
// made from its bundle's settings schema, or removed. Enabled plugins' commands join the `/`
// list of every member.

const BUNDLE_TYPE = 'application/vnd.svc.plugin-bundle+json';

/** The plugin id a bundle names, when its text is JSON (the server checks the rest). */
async function pluginIdOf(file: File): Promise<string | null> {
  try {
    const id = (JSON.parse(await file.text()) as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

export function PluginSettings({ serverId }: { serverId: string }) {
  const [plugins, setPlugins] = useState<WorkspacePlugin[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = () =>
    gql<{ workspacePlugins: WorkspacePlugin[] }>(WORKSPACE_PLUGINS, { serverId })
      .then((d) => setPlugins(d.workspacePlugins))
      .catch(setError);
  useEffect(() => {
    void reload();
  }, [serverId]);
  const changed = async (words: string) => {
    pluginsChanged();
    showInfo(words);
    await reload();
  };
  return (
    <>
      <AddPlugin serverId={serverId} plugins={plugins ?? []} changed={changed} />
      <ErrorText error={error} />
      <h3>Installed plugins</h3>
      {plugins?.length === 0 && <p class="hint">No plugins yet.</p>}
      <ul class="plain plugin-list">
        {plugins?.map((p) => (
          <PluginEntry key={p.id} plugin={p} changed={changed} />
        ))}
      </ul>
    </>
  );
}

function AddPlugin(p: {
  serverId: string;
  plugins: WorkspacePlugin[];
  changed: (words: string) => Promise<void>;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const add = async (form: HTMLFormElement) => {
    const file = new FormData(form).get('bundle');
    setError(null);
    if (!(file instanceof File) || !file.size) return;
    setBusy(true);
    try {
      const id = await pluginIdOf(file);
      const installed = id ? p.plugins.find((x) => x.pluginId === id) : undefined;
      if (installed) {
        const yes = await confirmAction({
          title: `Replace ${installed.name} ${installed.version}?`,
          body: `${installed.name} is installed already. Its entry moves to the uploaded bundle; its settings are kept where the new version allows them.`,
          confirm: 'Replace',
        });
        if (!yes) return;
      }
      const up = await postBody<{ sha256: string }>(
        `/api/plugin-bundles/${encodeURIComponent(p.serverId)}`,
        file,
        BUNDLE_TYPE,
      );
      if (installed) {
        const d = await gql<{ updateWorkspacePlugin: WorkspacePlugin }>(UPDATE_PLUGIN, {
          input: { id: installed.id, bundleSha256: up.sha256 },
        });
        form.reset();
        await p.changed(
          `${d.updateWorkspacePlugin.name} is now version ${d.updateWorkspacePlugin.version}.`,
        );
      } else {
        const d = await gql<{ addWorkspacePlugin: WorkspacePlugin }>(ADD_PLUGIN, {
          input: { serverId: p.serverId, bundleSha256: up.sha256 },
        });
        form.reset();
        await p.changed(`${d.addWorkspacePlugin.name} ${d.addWorkspacePlugin.version} was added.`);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      aria-label="Add a plugin"
      onSubmit={(e) => {
        e.preventDefault();
        void add(e.currentTarget);
      }}
    >
      <h3>Add a plugin</h3>
      <p class="hint">
        A plugin bundle is one JSON file of at most 8 MB. Every member’s app loads the enabled
        plugins, and their commands join the <kbd>/</kbd> list.
      </p>
      <label>
        Plugin bundle
        <input
          name="bundle"
          type="file"
          required
          accept={`.json,${BUNDLE_TYPE},application/json`}
        />
      </label>
      <ErrorText error={error} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Uploading…' : 'Upload and add'}
      </button>
    </form>
  );
}

function PluginEntry(p: { plugin: WorkspacePlugin; changed: (words: string) => Promise<void> }) {
  const x = p.plugin;
  const [error, setError] = useState<unknown>(null);
  const [settingUp, setSettingUp] = useState(false);
  const hasSettings = Object.keys(x.settingsSchema?.properties ?? {}).length > 0;
  const toggle = () =>
    gql(UPDATE_PLUGIN, { input: { id: x.id, enabled: !x.enabled } })
      .then(() => p.changed(`${x.name} is ${x.enabled ? 'disabled' : 'enabled'}.`))
      .catch(setError);
  const remove = async () => {
    const yes = await confirmAction({
      title: `Remove ${x.name}?`,
      body: 'Its commands leave every member’s list and its settings are forgotten. The uploaded bundle stays, so it can be added again.',
      confirm: 'Remove',
    });
    if (!yes) return;
    await gql(REMOVE_PLUGIN, { id: x.id })
      .then(() => p.changed(`${x.name} was removed.`))
      .catch(setError);
  };
  const headingId = `plugin-${x.id}`;
  return (
    <li class="plugin" aria-labelledby={headingId}>
      <h4 id={headingId}>
        <span dir="auto">{x.name}</span> <span class="muted small">{x.version}</span>
        {!x.enabled && (
          <>
            {' '}
            <span class="tag">disabled</span>
          </>
        )}
      </h4>
      {x.description && (
        <p dir="auto" class="plugin-description">
          {x.description}
        </p>
      )}
      <p class="muted small">
        <code>{x.pluginId}</code> by <span dir="auto">{x.author.name}</span>
        {x.capabilities.length > 0 && <> · asks for {x.capabilities.join(', ')}</>}
      </p>
      {x.commands.length > 0 && (
        <ul class="plain plugin-commands" aria-label={`Commands of ${x.name}`}>
          {x.commands.map((c) => (
            <li key={c.name}>
              <code>
                /{c.name}
                {c.arguments.map((a) => (a.required ? ` <${a.name}>` : ` [${a.name}]`)).join('')}
              </code>{' '}
              <span dir="auto">{c.description}</span>
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={error} />
      <div class="buttons wrap">
        <button type="button" onClick={() => void toggle()}>
          {x.enabled ? `Disable ${x.name}` : `Enable ${x.name}`}
        </button>
        {hasSettings && (
          <button type="button" aria-expanded={settingUp} onClick={() => setSettingUp(!settingUp)}>
            Settings of {x.name}
          </button>
        )}
        <button type="button" class="danger" onClick={() => void remove()}>
          Remove {x.name}
        </button>
      </div>
      {settingUp && (
        <PluginSettingsForm
          plugin={x}
          done={async () => {
            setSettingUp(false);
            await p.changed(`The settings of ${x.name} were saved.`);
          }}
        />
      )}
    </li>
  );
}

/** A setting's value as the form shows it (text for every kind but a switch). */
function shown(v: unknown): string {
  return v === undefined || v === null ? '' : String(v);
}

/** The form's text for a setting as its schema's type, or undefined when left empty. */
function typed(s: PluginSettingSchema, raw: string): string | number | undefined {
  if (raw === '') return undefined;
  if (s.type === 'integer' || s.type === 'number') return Number(raw);
  return raw;
}

/**
 * The settings form a bundle's schema calls for: a switch for a boolean, a list for an `enum`, a
 * number field within `minimum`/`maximum` for a number, a text field within `maxLength` for a
 * string; titles and descriptions as labels and hints. The server checks the values again.
 */
function PluginSettingsForm(p: { plugin: WorkspacePlugin; done: () => Promise<void> }) {
  const x = p.plugin;
  const props = Object.entries(x.settingsSchema?.properties ?? {});
  const required = new Set(x.settingsSchema?.required ?? []);
  const [error, setError] = useState<unknown>(null);
  const save = async (form: HTMLFormElement) => {
    const f = new FormData(form);
    const settings: Record<string, unknown> = {};
    for (const [name, s] of props) {
      if (s.type === 'boolean') {
        settings[name] = f.get(name) === 'on';
        continue;
      }
      const raw = String(f.get(name) ?? '');
      const value = s.enum
        ? s.enum.find((v) => String(v) === raw)
        : typed(s, s.type === 'string' ? raw : raw.trim());
      if (value !== undefined) settings[name] = value;
    }
    setError(null);
    try {
      await gql(UPDATE_PLUGIN, { input: { id: x.id, settings } });
      await p.done();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form
      class="form"
      aria-label={`Settings of ${x.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save(e.currentTarget);
      }}
    >
      {props.map(([name, s]) => {
        const id = `ps-${x.id}-${name}`;
        const hint = s.description ? `${id}-hint` : undefined;
        const label = `${s.title ?? name}${required.has(name) ? '' : ' (optional)'}`;
        const value = x.settings[name] ?? s.default;
        let field;
        if (s.type === 'boolean') {
          return (
            <div key={name}>
              <label class="check">
                <input
                  type="checkbox"
                  name={name}
                  defaultChecked={value === true}
                  aria-describedby={hint}
                />{' '}
                {s.title ?? name}
              </label>
              {hint && (
                <p class="hint" id={hint}>
                  {s.description}
                </p>
              )}
            </div>
          );
        } else if (s.enum) {
          field = (
            <select id={id} name={name} aria-describedby={hint} required={required.has(name)}>
              {!required.has(name) && <option value="">(the default)</option>}
              {s.enum.map((v) => (
                <option key={String(v)} value={String(v)} selected={v === value}>
                  {String(v)}
                </option>
              ))}
            </select>
          );
        } else if (s.type === 'integer' || s.type === 'number') {
          field = (
            <input
              id={id}
              name={name}
              type="number"
              step={s.type === 'integer' ? 1 : 'any'}
              min={s.minimum}
              max={s.maximum}
              required={required.has(name)}
              defaultValue={shown(value)}
              aria-describedby={hint}
            />
          );
        } else {
          field = (
            <input
              id={id}
              name={name}
              maxLength={s.maxLength}
              required={required.has(name)}
              defaultValue={shown(value)}
              aria-describedby={hint}
              dir="auto"
            />
          );
        }
        return (
          <div key={name}>
            <label for={id}>{label}</label>
            {field}
            {hint && (
              <p class="hint" id={hint}>
                {s.description}
              </p>
            )}
          </div>
        );
      })}
      <ErrorText error={error} />
      <div class="buttons">
        <button type="submit" class="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}
