import { readMentions } from '../../../services/messages/index.js';
import { requireActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

import { loadUser, userField } from '../accounts/loaders.js';

import {
  loadEdits,
  loadLinkPreviews,
  loadMessage,
  loadMlsInfo,
  loadPinned,
  loadReactions,
} from './loaders.js';
import { enumName } from '../../resolver-types.js';

// Message fields; the parent is a message row. Lookups are batched per page (loaders.ts).

export const Message: TypeResolvers<'Message'> = {
  serverId: (m) => m.workspaceId,
  author: (m, _a, ctx, info) => userField(ctx, info, m.authorId),
  text: (m) => (m.deletedAt === null ? m.text : null),
  isDeleted: (m) => m.deletedAt !== null,
  ciphertext: (m) => (m.deletedAt === null ? m.ciphertext : null),
  mls: async (m, _a, ctx, info) =>
    m.ciphertext === null ? null : ((await loadMlsInfo(ctx, info, m.id)) ?? null),
  forwardedFrom: async (m, _a, ctx, info) => {
    if (m.forwardedFromId === null) return null;
    const original = await loadMessage(ctx, info, m.forwardedFromId);
    return {
      messageId: m.forwardedFromId,
      original: original ?? null,
      createdAt: original?.createdAt ?? m.createdAt,
    };
  },
  reactions: async (m, _a, ctx, info) => (await loadReactions(ctx, info, m.id)) ?? [],
  mentions: (m) => {
    const s = readMentions(m.deletedAt === null ? m.mentions : null);
    return { userIds: s.users, channelIds: s.channels, here: s.here, channel: s.channel === true };
  },
  pinned: async (m, _a, ctx, info) => (await loadPinned(ctx, info, m.id)) ?? false,
  // Empty while `link_previews` is off (the service answers nothing then) and for a deleted
  // message (its previews went with it).
  linkPreviews: async (m, _a, ctx, info) =>
    m.deletedAt !== null ? [] : ((await loadLinkPreviews(ctx, info, m.id)) ?? []),
  editHistory: async (m, _a, ctx, info) => {
    if (
      !(await ctx.services.messages.reading.mayViewEditHistory(requireActor(ctx), m.workspaceId))
    ) {
      return null;
    }
    return (await loadEdits(ctx, info, m.id)) ?? [];
  },
};

export const ForwardedFrom: TypeResolvers<'ForwardedFrom'> = {
  author: (f, _a, ctx, info) =>
    f.original ? loadUser(ctx, info, f.original.authorId).then((u) => u ?? null) : null,
};

export const MessageEdit: TypeResolvers<'MessageEdit'> = {
  editor: (e, _a, ctx, info) => loadUser(ctx, info, e.editorId).then((u) => u ?? null),
};

export const LinkPreview: TypeResolvers<'LinkPreview'> = {
  kind: (p) => enumName(p.kind),
};
