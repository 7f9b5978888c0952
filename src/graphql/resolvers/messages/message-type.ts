import type { MessageEditTable, MessageTable } from '../../../db/tables/collaboration.js';
import type { LinkPreviewView } from '../../../services/link-previews/index.js';
import { readMentions } from '../../../services/messages/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

import { loadUser, userField } from '../accounts/loaders.js';

import {
  loadEdits,
  loadLinkPreviews,
  loadMessage,
  loadMlsInfo,
  loadPinned,
  loadReactions,
} from './loaders.js';

// Message fields; the parent is a message row. Lookups are batched per page (loaders.ts).

type R = Resolver<MessageTable>;

export const Message = {
  serverId: ((m) => m.workspaceId) as R,
  author: ((m, _a, ctx, info) => userField(ctx, info, m.authorId)) as R,
  text: ((m) => (m.deletedAt === null ? m.text : null)) as R,
  isDeleted: ((m) => m.deletedAt !== null) as R,
  ciphertext: ((m) => (m.deletedAt === null ? m.ciphertext : null)) as R,
  mls: (async (m, _a, ctx, info) =>
    m.ciphertext === null ? null : ((await loadMlsInfo(ctx, info, m.id)) ?? null)) as R,
  forwardedFrom: (async (m, _a, ctx, info) => {
    if (m.forwardedFromId === null) return null;
    const original = await loadMessage(ctx, info, m.forwardedFromId);
    return {
      messageId: m.forwardedFromId,
      original: original ?? null,
      createdAt: original?.createdAt ?? m.createdAt,
    };
  }) as R,
  reactions: (async (m, _a, ctx, info) => (await loadReactions(ctx, info, m.id)) ?? []) as R,
  mentions: ((m) => {
    const s = readMentions(m.deletedAt === null ? m.mentions : null);
    return { userIds: s.users, channelIds: s.channels, here: s.here, channel: s.channel === true };
  }) as R,
  pinned: (async (m, _a, ctx, info) => (await loadPinned(ctx, info, m.id)) ?? false) as R,
  // Empty while `link_previews` is off (the service answers nothing then) and for a deleted
  // message (its previews went with it).
  linkPreviews: (async (m, _a, ctx, info) =>
    m.deletedAt !== null ? [] : ((await loadLinkPreviews(ctx, info, m.id)) ?? [])) as R,
  editHistory: (async (m, _a, ctx, info) => {
    if (
      !(await ctx.services.messages.reading.mayViewEditHistory(requireActor(ctx), m.workspaceId))
    ) {
      return null;
    }
    return (await loadEdits(ctx, info, m.id)) ?? [];
  }) as R,
};

type Forward = { messageId: string; original: MessageTable | null; createdAt: number };

export const ForwardedFrom = {
  author: ((f, _a, ctx, info) =>
    f.original
      ? loadUser(ctx, info, f.original.authorId).then((u) => u ?? null)
      : null) as Resolver<Forward>,
};

export const MessageEdit = {
  editor: ((e, _a, ctx, info) =>
    loadUser(ctx, info, e.editorId).then((u) => u ?? null)) as Resolver<MessageEditTable>,
};

export const LinkPreview = {
  kind: ((p) => p.kind.toUpperCase()) as Resolver<LinkPreviewView>,
};
