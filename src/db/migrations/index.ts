import type { Migration } from 'kysely';

import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-collaboration.js';
import * as m0003 from './0003-accounts.js';
import * as m0004 from './0004-devices.js';
import * as m0005 from './0005-workspaces.js';
import * as m0006 from './0006-messages.js';
import * as m0007 from './0007-moderation.js';
import * as m0008 from './0008-presence.js';
import * as m0009 from './0009-invite-acceptance.js';
import * as m0010 from './0010-event-outbox.js';
import * as m0011 from './0011-search.js';
import * as m0012 from './0012-attachments.js';
import * as m0013 from './0013-custom-emoji.js';
import * as m0014 from './0014-plugins.js';
import * as m0015 from './0015-link-previews.js';
import * as m0016 from './0016-search-walk.js';
import * as m0017 from './0017-commands.js';
import * as m0018 from './0018-notifications.js';
import * as m0019 from './0019-mls.js';
import * as m0020 from './0020-federation.js';
import * as m0021 from './0021-federation-events.js';
import * as m0022 from './0022-notification-wants-more.js';
import * as m0023 from './0023-search-languages.js';
import * as m0024 from './0024-import-map.js';
import * as m0025 from './0025-search-variants.js';
import * as m0026 from './0026-conversation-member-order.js';
import * as m0027 from './0027-search-time-order.js';
import * as m0028 from './0028-search-time-column.js';
import * as m0029 from './0029-search-time-trigger-when.js';
import * as m0030 from './0030-search-fts-without-sizes.js';
import * as m0031 from './0031-search-row-check-by-trigger.js';

/**
 * Every migration, in order. Append-only: a shipped migration is never edited; a change is a new
 * file listed at the end.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-collaboration': m0002,
  '0003-accounts': m0003,
  '0004-devices': m0004,
  '0005-workspaces': m0005,
  '0006-messages': m0006,
  '0007-moderation': m0007,
  '0008-presence': m0008,
  '0009-invite-acceptance': m0009,
  '0010-event-outbox': m0010,
  '0011-search': m0011,
  '0012-attachments': m0012,
  '0013-custom-emoji': m0013,
  '0014-plugins': m0014,
  '0015-link-previews': m0015,
  '0016-search-walk': m0016,
  '0017-commands': m0017,
  '0018-notifications': m0018,
  '0019-mls': m0019,
  '0020-federation': m0020,
  '0021-federation-events': m0021,
  '0022-notification-wants-more': m0022,
  '0023-search-languages': m0023,
  '0024-import-map': m0024,
  '0025-search-variants': m0025,
  '0026-conversation-member-order': m0026,
  '0027-search-time-order': m0027,
  '0028-search-time-column': m0028,
  '0029-search-time-trigger-when': m0029,
  '0030-search-fts-without-sizes': m0030,
  '0031-search-row-check-by-trigger': m0031,
};
