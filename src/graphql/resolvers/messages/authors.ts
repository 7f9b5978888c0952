import type { GraphQLResolveInfo } from 'graphql';

import type { MessageView } from '../../../services/messages/index.js';
import type { GraphqlContext } from '../../context.js';
import { selects } from '../../selection.js';
import { primeUsers } from '../accounts/loaders.js';

/**
 * `messages` with their authors loaded when the field being resolved selects `path` (to the
 * messages' `author`): one batch, as the `author` fields would have made, read before graphql-js
 * completes the messages, so each `author` answers at once and a page's messages complete
 * without a promise each (bench `instructions`, a page of 30).
 */
export async function withAuthors<T>(
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  path: readonly string[],
  messages: readonly MessageView[],
  result: T,
): Promise<T> {
  if (messages.length > 0 && selects(info, path)) {
    await primeUsers(
      ctx,
      info,
      messages.map((m) => m.authorId),
    );
  }
  return result;
}
