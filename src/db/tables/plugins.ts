// Row types of workspace plugins (src/services/plugins/). Timestamps in ms.

/** A bundle a workspace has: uploaded there by a Moderator or the owner. */
export interface PluginBundleTable {
  workspaceId: string;
  /** The blob (sha256 hex) holding the exact bytes uploaded. */
  sha256: string;
  sizeBytes: number;
  /** The bundle's `id` and `version`. */
  pluginId: string;
  version: string;
  /** The bundle without its client code, as JSON (BundleManifest). */
  manifest: string;
  uploadedBy: string;
  createdAt: number;
}

/** One plugin in a workspace's registry (one per plugin id), naming one of its bundles. */
export interface WorkspacePluginTable {
  id: string;
  workspaceId: string;
  pluginId: string;
  bundleSha256: string;
  /** 1 while its commands and keybinds are contributed and clients load it. */
  enabled: number;
  /** The settings, checked against the bundle's settings schema, as a JSON object. */
  settings: string;
  addedBy: string;
  createdAt: number;
  updatedAt: number;
}
