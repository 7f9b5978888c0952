import fs from 'node:fs/promises';

import type { Logger } from 'pino';

import { actingAccountId, actorId, type Actor } from '../../auth/actor.js';
import { assertFeature } from '../../config/feature-guard.js';
import { featureEnabled, type Config } from '../../config/index.js';
import { MAX_PLUGINS_PER_WORKSPACE } from '../../config/variables.js';
import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { PluginBundleTable, WorkspacePluginTable } from '../../db/tables/plugins.js';
import type { Tx } from '../../db/transaction.js';
import type { EventPort } from '../../events/port.js';
import { workspaceTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import { capExceeded, conflict, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { Authz } from '../authz/index.js';
import { isSha256, type FileStorage } from '../files/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';
import type { AuditLog } from '../audit/index.js';
import { lockWorkspace } from '../workspaces/index.js';

import { type BundleManifest, readBundle, resolveSettings } from './bundle.js';
import { BUNDLE_MAX_BYTES } from './bundle-schema.js';
import {
  bundlesOf,
  countPlugins,
  deleteForWorkspace,
  deletePlugin,
  findBundle,
  findPlugin,
  findPluginById,
  insertBundleIfNew,
  insertPlugin,
  listPlugins,
  pluginsPage,
  referencedBlobs,
  updatePlugin,
} from './queries.js';

export interface PluginServiceDeps {
  db: Db;
  events: EventPort;
  config: Config;
  clock: Clock;
  log: Logger;
  files: FileStorage;
  authz: Authz;
  audit: AuditLog;
}

/** Where a contribution comes from: the registry entry, its plugin and the version enabled. */
export interface ContributionSource {
  workspacePluginId: string;
  pluginId: string;
  version: string;
}

export interface ContributedCommand {
  name: string;
  description: string;
  arguments: { name: string; type: string; description: string | null; required: boolean }[];
  source: ContributionSource;
}

export interface ContributedKeybind {
  keys: string;
  command: string;
  description: string | null;
  source: ContributionSource;
}

/** What the enabled plugins of a workspace contribute (the command system reads it). */
export interface PluginContributions {
  commands: ContributedCommand[];
  keybinds: ContributedKeybind[];
}

/** A registry entry as GraphQL shows it. */
export interface WorkspacePluginView {
  id: string;
  serverId: string;
  pluginId: string;
  name: string;
  version: string;
  description: string;
  author: BundleManifest['author'];
  capabilities: string[];
  enabled: boolean;
  settings: Record<string, unknown>;
  settingsSchema: BundleManifest['contributes']['settings'] | null;
  bundleSha256: string;
  bundleSize: number;
  bundleUrl: string;
  commands: ContributedCommand[];
  keybinds: ContributedKeybind[];
  addedBy: string;
  createdAt: number;
  updatedAt: number;
}

/** A stored, checked upload: whether the workspace had the bundle before. */
export interface StoredBundle {
  sha256: string;
  size: number;
  url: string;
  created: boolean;
}

export const bundleUrl = (workspaceId: string, sha256: string) =>
  `/api/plugin-bundles/${workspaceId}/${sha256}`;

/**
 * Workspace plugins (docs/plugins.md): bundles uploaded to a workspace and checked, the registry
 * of its plugins (Moderators and the owner change it, every member reads it), and what the
 * enabled ones contribute to the command system. Every change is audited in its transaction and
 * announced on the workspace's topic after commit.
 */
export class PluginService {
  constructor(private readonly deps: PluginServiceDeps) {}

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** Plugins a workspace may hold: the operator's cap, never past the built-in 100. */
  get cap(): number {
    return Math.min(
      this.deps.config.limits.pluginsPerWorkspace ?? MAX_PLUGINS_PER_WORKSPACE,
      MAX_PLUGINS_PER_WORKSPACE,
    );
  }

  /** NOT_FOUND for what is not a workspace id (the direct space has no plugins). */
  private workspaceId(serverId: unknown): string {
    if (typeof serverId !== 'string' || !isId(serverId) || serverId === DIRECT_SPACE_ID) {
      throw notFound('workspace');
    }
    return serverId;
  }

  /**
   * Checks an upload before a byte is read: the feature, then a Moderator or the owner of the
   * workspace (NOT_FOUND for anyone not in it).
   */
  async authorizeUpload(actor: Actor, serverId: unknown): Promise<string> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const workspaceId = this.workspaceId(serverId);
    await this.deps.authz.assertCan(actor, 'plugin:manage', { workspaceId });
    return workspaceId;
  }

  /**
   * Streams a bundle into the blob store (BlobTooLargeError past 8 MiB, at once), reads and
   * checks it (BundleRefusal), and records that the workspace has it. A refused bundle's blob is
   * named by no row, so the sweep removes it.
   */
  async storeBundle(
    actor: Actor,
    workspaceId: string,
    body: AsyncIterable<Uint8Array>,
  ): Promise<StoredBundle> {
    const accountId = actingAccountId(actor);
    const blobs = this.deps.files.blobs;
    const blob = await blobs.put(body, { maxBytes: BUNDLE_MAX_BYTES });
    const manifest = readBundle(await fs.readFile(blobs.pathOf(blob.sha256)));
    const created = await this.deps.db.transaction(async (tx) => {
      // The uploader may have lost the role while the body streamed in.
      await this.deps.authz.assertCan(actor, 'plugin:manage', { workspaceId, db: tx.db });
      return insertBundleIfNew(tx.db, {
        workspaceId,
        sha256: blob.sha256,
        sizeBytes: blob.sizeBytes,
        pluginId: manifest.id,
        version: manifest.version,
        manifest: JSON.stringify(manifest),
        uploadedBy: accountId,
        createdAt: this.now(),
      });
    });
    return {
      sha256: blob.sha256,
      size: blob.sizeBytes,
      url: bundleUrl(workspaceId, blob.sha256),
      created,
    };
  }

  /** A bundle of the workspace for one of its members: VALIDATION for a name that is not hex. */
  async bundleForDownload(
    actor: Actor,
    serverId: unknown,
    sha256: unknown,
  ): Promise<{ sha256: string; sizeBytes: number }> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const workspaceId = this.workspaceId(serverId);
    await this.deps.authz.requireMember(actor, { workspaceId });
    if (typeof sha256 !== 'string' || !isSha256(sha256)) {
      throw validation('a bundle is named by its sha256: 64 lower-case hex digits');
    }
    const row = await findBundle(this.kysely, workspaceId, sha256);
    if (!row) throw notFound('plugin bundle');
    return { sha256: row.sha256, sizeBytes: Number(row.sizeBytes) };
  }

  /**
   * A page of a workspace's registry, for any of its members, oldest first. The default page
   * holds as many as a registry may have, so a caller that does not page gets them all.
   */
  async list(
    actor: Actor,
    serverId: unknown,
    args: KeysetArgs = {},
  ): Promise<WorkspacePluginView[]> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const page = parseKeysetArgs(args, {
      max: MAX_PLUGINS_PER_WORKSPACE,
      default: MAX_PLUGINS_PER_WORKSPACE,
    });
    const workspaceId = this.workspaceId(serverId);
    await this.deps.authz.assertCan(actor, 'workspace:read', { workspaceId });
    const rows = await pluginsPage(this.kysely, workspaceId, page);
    return this.views(workspaceId, keysetRows(rows, page));
  }

  /** Adds the plugin of one of the workspace's bundles (docs/plugins.md, "The registry"). */
  async add(
    actor: Actor,
    input: { serverId: unknown; bundleSha256: unknown; enabled?: unknown; settings?: unknown },
  ): Promise<WorkspacePluginView> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const workspaceId = this.workspaceId(input.serverId);
    const accountId = actingAccountId(actor);
    const enabled = optionalBoolean(input.enabled, 'enabled') ?? true;
    const now = this.now();
    const row = await this.deps.db.transaction(async (tx) => {
      await this.deps.authz.assertCan(actor, 'plugin:manage', { workspaceId, db: tx.db });
      const bundle = await this.bundleOf(tx, workspaceId, input.bundleSha256);
      const manifest = JSON.parse(bundle.manifest) as BundleManifest;
      const settings = checkSettings(manifest, input.settings);
      // Serializes adds to one workspace, so two at the cap cannot both pass the count.
      if (!(await lockWorkspace(tx.db, workspaceId))) throw notFound('workspace');
      if (await findPluginById(tx.db, workspaceId, manifest.id)) {
        throw conflict(
          `the plugin ${manifest.id} is already in this workspace; move it to another version with updateWorkspacePlugin`,
        );
      }
      if ((await countPlugins(tx.db, workspaceId)) >= this.cap) {
        throw capExceeded(
          'plugins per workspace',
          'SVC_LIMIT_PLUGINS_PER_WORKSPACE',
          this.cap,
          this.cap === MAX_PLUGINS_PER_WORKSPACE,
        );
      }
      const row: WorkspacePluginTable = {
        id: newId(),
        workspaceId,
        pluginId: manifest.id,
        bundleSha256: bundle.sha256,
        enabled: enabled ? 1 : 0,
        settings: JSON.stringify(settings),
        addedBy: accountId,
        createdAt: now,
        updatedAt: now,
      };
      await insertPlugin(tx.db, row);
      await this.recordChange(tx, actor, accountId, row, manifest.version, now, null);
      return row;
    });
    return (await this.views(workspaceId, [row]))[0]!;
  }

  /**
   * Enables or disables an entry, moves it to another bundle of the same plugin, or replaces its
   * settings; the settings are checked against the bundle the entry ends up on.
   */
  async update(
    actor: Actor,
    input: { id: unknown; enabled?: unknown; bundleSha256?: unknown; settings?: unknown },
  ): Promise<WorkspacePluginView> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const accountId = actingAccountId(actor);
    const enabled = optionalBoolean(input.enabled, 'enabled');
    const moving = input.bundleSha256 !== undefined && input.bundleSha256 !== null;
    const newSettings = input.settings !== undefined && input.settings !== null;
    if (enabled === null && !moving && !newSettings) {
      throw validation('give enabled, bundleSha256 or settings to change');
    }
    const now = this.now();
    const row = await this.deps.db.transaction(async (tx) => {
      const current = await this.entryFor(tx, actor, input.id);
      const workspaceId = current.workspaceId;
      const bundle = moving
        ? await this.bundleOf(tx, workspaceId, input.bundleSha256)
        : (await findBundle(tx.db, workspaceId, current.bundleSha256))!;
      const manifest = JSON.parse(bundle.manifest) as BundleManifest;
      if (manifest.id !== current.pluginId) {
        throw validation(
          `the bundle is of the plugin ${manifest.id}, not ${current.pluginId}; add it as a plugin of its own`,
        );
      }
      const settingsJson = JSON.stringify(
        checkSettings(manifest, newSettings ? input.settings : JSON.parse(current.settings)),
      );
      const changed: string[] = [];
      const next: WorkspacePluginTable = { ...current, updatedAt: now };
      if (enabled !== null && (enabled ? 1 : 0) !== current.enabled) {
        next.enabled = enabled ? 1 : 0;
        changed.push('enabled');
      }
      if (bundle.sha256 !== current.bundleSha256) {
        next.bundleSha256 = bundle.sha256;
        changed.push('bundle');
      }
      if (settingsJson !== current.settings) {
        next.settings = settingsJson;
        changed.push('settings');
      }
      if (changed.length === 0) return current;
      await updatePlugin(tx.db, current.id, {
        enabled: next.enabled,
        bundleSha256: next.bundleSha256,
        settings: next.settings,
        updatedAt: now,
      });
      await this.recordChange(tx, actor, accountId, next, manifest.version, now, changed);
      return next;
    });
    return (await this.views(row.workspaceId, [row]))[0]!;
  }

  /**
   * The audit entry and the event of an entry added (`changed` null) or updated (`changed`: what
   * the update changed), `version` being the version it is now on.
   */
  private async recordChange(
    tx: Tx,
    actor: Actor,
    by: string,
    entry: WorkspacePluginTable,
    version: string,
    now: number,
    changed: string[] | null,
  ) {
    const ids = { workspacePluginId: entry.id, pluginId: entry.pluginId, version };
    const enabled = entry.enabled === 1;
    await this.deps.audit.record(tx, {
      action: changed ? 'plugin.update' : 'plugin.add',
      actorId: actorId(actor),
      target: `workspace:${entry.workspaceId}`,
      details: changed ? { ...ids, changed } : { ...ids, enabled },
    });
    const topic = workspaceTopic(entry.workspaceId);
    const payload = {
      audience: { kind: 'workspace' } as const,
      serverId: entry.workspaceId,
      ...ids,
      bundleSha256: entry.bundleSha256,
      enabled,
    };
    if (changed) {
      emit(tx, this.deps.events, topic, 'WorkspacePluginUpdated', now, { ...payload, changed, by });
    } else {
      emit(tx, this.deps.events, topic, 'WorkspacePluginAdded', now, { ...payload, by });
    }
  }

  /** Removes an entry; the bundle stays in the workspace. Answers the entry's id. */
  async remove(actor: Actor, id: unknown): Promise<string> {
    assertFeature(this.deps.config, 'workspace_plugins');
    const accountId = actingAccountId(actor);
    const now = this.now();
    return this.deps.db.transaction(async (tx) => {
      const current = await this.entryFor(tx, actor, id);
      await deletePlugin(tx.db, current.id);
      await this.deps.audit.record(tx, {
        action: 'plugin.remove',
        actorId: actorId(actor),
        target: `workspace:${current.workspaceId}`,
        details: { workspacePluginId: current.id, pluginId: current.pluginId },
      });
      emit(
        tx,
        this.deps.events,
        workspaceTopic(current.workspaceId),
        'WorkspacePluginRemoved',
        now,
        {
          audience: { kind: 'workspace' },
          serverId: current.workspaceId,
          workspacePluginId: current.id,
          pluginId: current.pluginId,
          by: accountId,
        },
      );
      return current.id;
    });
  }

  /** What the enabled plugins contribute, for a member of the workspace. */
  async contributions(actor: Actor, serverId: unknown): Promise<PluginContributions> {
    const workspaceId = this.workspaceId(serverId);
    await this.deps.authz.assertCan(actor, 'workspace:read', { workspaceId });
    return this.contributionsOf(workspaceId);
  }

  /**
   * What the enabled plugins of a workspace contribute, read from the registry on every call (a
   * disabled or removed plugin's are gone at once); empty while the feature is off. For the
   * command system, which has checked the caller's access itself.
   */
  async contributionsOf(workspaceId: string): Promise<PluginContributions> {
    if (!featureEnabled(this.deps.config, 'workspace_plugins'))
      return { commands: [], keybinds: [] };
    const views = await this.views(workspaceId, await listPlugins(this.kysely, workspaceId, true));
    return {
      commands: views.flatMap((v) => v.commands),
      keybinds: views.flatMap((v) => v.keybinds),
    };
  }

  /** Workspace deletion: its registry and bundle rows, in the deletion's transaction. */
  async onWorkspaceDeleted(tx: Tx, workspaceId: string): Promise<void> {
    await deleteForWorkspace(tx.db, workspaceId);
  }

  /** The blob sweep's reference source: names some workspace's bundle row uses. */
  referencedBlobs(names: string[]): Promise<string[]> {
    return referencedBlobs(this.kysely, names);
  }

  /** An entry the actor may change: NOT_FOUND unless it exists in a workspace they are in. */
  private async entryFor(tx: Tx, actor: Actor, id: unknown): Promise<WorkspacePluginTable> {
    if (typeof id !== 'string' || !isId(id)) throw notFound('workspace plugin');
    const row = await findPlugin(tx.db, id);
    const scope = { workspaceId: row?.workspaceId ?? '', db: tx.db };
    if (!row || !(await this.deps.authz.membership(actor, scope))) {
      throw notFound('workspace plugin');
    }
    await this.deps.authz.assertCan(actor, 'plugin:manage', scope);
    return row;
  }

  private async bundleOf(tx: Tx, workspaceId: string, sha256: unknown): Promise<PluginBundleTable> {
    if (typeof sha256 !== 'string' || !isSha256(sha256)) {
      throw validation('bundleSha256 must be 64 lower-case hex digits, as the upload answered');
    }
    const bundle = await findBundle(tx.db, workspaceId, sha256);
    if (!bundle) throw notFound('plugin bundle');
    return bundle;
  }

  private async views(
    workspaceId: string,
    rows: WorkspacePluginTable[],
  ): Promise<WorkspacePluginView[]> {
    const bundles = new Map(
      (
        await bundlesOf(
          this.kysely,
          workspaceId,
          rows.map((r) => r.bundleSha256),
        )
      ).map((b) => [b.sha256, b]),
    );
    return rows.map((row) => {
      const bundle = bundles.get(row.bundleSha256)!;
      const m = JSON.parse(bundle.manifest) as BundleManifest;
      const source = { workspacePluginId: row.id, pluginId: m.id, version: m.version };
      return {
        id: row.id,
        serverId: workspaceId,
        pluginId: m.id,
        name: m.name,
        version: m.version,
        description: m.description,
        author: m.author,
        capabilities: m.capabilities,
        enabled: row.enabled === 1,
        settings: JSON.parse(row.settings) as Record<string, unknown>,
        settingsSchema: m.contributes.settings ?? null,
        bundleSha256: bundle.sha256,
        bundleSize: Number(bundle.sizeBytes),
        bundleUrl: bundleUrl(workspaceId, bundle.sha256),
        commands: (m.contributes.commands ?? []).map((c) => ({
          name: c.name,
          description: c.description,
          arguments: (c.arguments ?? []).map((a) => ({
            name: a.name,
            type: a.type,
            description: a.description ?? null,
            required: a.required === true,
          })),
          source,
        })),
        keybinds: (m.contributes.keybinds ?? []).map((k) => ({
          keys: k.keys,
          command: k.command,
          description: k.description ?? null,
          source,
        })),
        addedBy: row.addedBy,
        createdAt: Number(row.createdAt),
        updatedAt: Number(row.updatedAt),
      };
    });
  }
}

function optionalBoolean(value: unknown, name: string): boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') throw validation(`${name} must be true or false`);
  return value;
}

function checkSettings(manifest: BundleManifest, given: unknown): Record<string, unknown> {
  const res = resolveSettings(manifest.contributes.settings, given);
  if (!res.ok) throw validation(res.reason);
  return res.settings;
}
