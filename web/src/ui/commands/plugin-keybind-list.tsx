import { chordWords } from './chords.ts';
import { pluginKeybinds } from './plugin-keybinds.ts';

/**
 * The workspace dialog's Commands tab: the keybinds its enabled plugins contribute, each bound
 * or, when the browser, the app or a keybind has its keys, not bound with the reason.
 */
export function PluginKeybindList() {
  const list = pluginKeybinds.value;
  return (
    <section aria-labelledby="plugin-keybinds-h">
      <h3 id="plugin-keybinds-h">Plugin keybinds</h3>
      {list.length === 0 && <p class="hint">No enabled plugin here binds keys.</p>}
      {list.length > 0 && (
        <ul class="plain" aria-labelledby="plugin-keybinds-h">
          {list.map((k) => (
            <li key={`${k.workspacePluginId}:${k.chord}`}>
              <kbd>{chordWords(k.chord)}</kbd> runs /{k.command} of {k.pluginName}
              {k.description ? ` (${k.description})` : ''}:{' '}
              {k.refused ? <span>not bound. {k.refused}</span> : <span>bound.</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
