import type { Resolvers } from '../../resolver-types.js';

import { AuditEntry, AuditKind, PrincipalKind } from './audit-entry.js';
import { IpBlock, PrincipalBlock } from './block-cursors.js';
import { instanceAuditLog } from './instance-audit-log.js';
import { instanceBlockIp } from './instance-block-ip.js';
import { instanceBlockPrincipal } from './instance-block-principal.js';
import { instanceIpBlocks } from './instance-ip-blocks.js';
import { instancePrincipalBlocks } from './instance-principal-blocks.js';
import { instanceReports } from './instance-reports.js';
import { instanceResolveReport } from './instance-resolve-report.js';
import { instanceUnblockIp } from './instance-unblock-ip.js';
import { instanceUnblockPrincipal } from './instance-unblock-principal.js';
import { reportMessage } from './report-message.js';
import { reportUser } from './report-user.js';
import { reportWorkspace } from './report-workspace.js';
import { resolveWorkspaceReport } from './resolve-workspace-report.js';
import { workspaceReports } from './workspace-reports.js';

export const moderationResolvers: Resolvers = {
  Query: {
    instanceReports,
    instancePrincipalBlocks,
    instanceIpBlocks,
    instanceAuditLog,
    workspaceReports,
  },
  Mutation: {
    reportMessage,
    reportUser,
    reportWorkspace,
    resolveWorkspaceReport,
    instanceResolveReport,
    instanceBlockPrincipal,
    instanceUnblockPrincipal,
    instanceBlockIp,
    instanceUnblockIp,
  },
  AuditEntry,
  AuditKind,
  PrincipalKind,
  PrincipalBlock,
  IpBlock,
};
