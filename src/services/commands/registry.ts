import type { PluginService } from '../plugins/index.js';

import type { CommandDef, Surface } from './types.js';

/**
 * The commands of a context: the built-ins, then the commands of the workspace's enabled plugins
 * (read on every call, so a disabled plugin's commands are gone at once). Plugin commands run in
 * the clients that load the plugin: the server checks, audits and answers CLIENT_ACTION.
 */
export class CommandRegistry {
  constructor(
    private readonly builtins: readonly CommandDef[],
    private readonly plugins: Pick<PluginService, 'contributionsOf'>,
  ) {}

  builtin(name: string): CommandDef | undefined {
    return this.builtins.find((c) => c.name === name);
  }

  allBuiltins(): readonly CommandDef[] {
    return this.builtins;
  }

  /** Every command of a workspace context (or the built-ins alone without one). */
  async all(workspaceId: string | null): Promise<CommandDef[]> {
    if (!workspaceId) return [...this.builtins];
    const { commands } = await this.plugins.contributionsOf(workspaceId);
    const fromPlugins = commands.map((c): CommandDef => ({
      name: c.name,
      description: c.description,
      args: c.arguments.map((a) => ({
        name: a.name,
        type: a.type as CommandDef['args'][number]['type'],
        description: a.description ?? a.name,
        required: a.required,
      })),
      capability: 'workspace:read',
      actions: ['workspace:read'],
      surfaces: ['MESSAGE_BOX', 'PALETTE'] satisfies Surface[],
      destructive: false,
      needsWorkspace: true,
      needsConversation: false,
      source: {
        kind: 'PLUGIN',
        workspacePluginId: c.source.workspacePluginId,
        pluginId: c.source.pluginId,
        version: c.source.version,
      },
      nlDescription: null,
      intentSamples: [],
      aiCallable: false,
    }));
    return [...this.builtins, ...fromPlugins];
  }

  /**
   * The command a run names: a built-in wins over a plugin command of the same name unless the
   * run names the plugin (`pluginId` or the registry entry's id).
   */
  async find(
    workspaceId: string | null,
    name: string,
    plugin: string | null,
  ): Promise<CommandDef | undefined> {
    if (!plugin) {
      const b = this.builtin(name);
      if (b) return b;
    }
    const all = await this.all(workspaceId);
    return all.find(
      (c) =>
        c.name === name &&
        c.source.kind === 'PLUGIN' &&
        (!plugin || c.source.pluginId === plugin || c.source.workspacePluginId === plugin),
    );
  }
}
