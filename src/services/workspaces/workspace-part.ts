import type { AccountService } from '../accounts/index.js';
import { AreaPart, type AreaDeps } from '../area-deps.js';
import type { Authz } from '../authz/index.js';

/** What the workspaces area is built from (build-services.ts). */
export interface WorkspaceServiceDeps extends AreaDeps {
  accounts: AccountService;
  authz: Authz;
}

/** A part of the workspaces area. */
export abstract class WorkspacePart extends AreaPart<WorkspaceServiceDeps> {}
