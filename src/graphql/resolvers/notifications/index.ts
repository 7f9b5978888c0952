import type { Resolvers } from '../../resolver-types.js';

import { Conversation, Mentions, Workspace } from './extended-types.js';
import {
  markAllNotificationsRead,
  markConversationNotificationsRead,
  markNotificationRead,
} from './mark-read.js';
import { notificationSettings } from './notification-settings.js';
import { Notification } from './notification-type.js';
import { notifications } from './notifications.js';
import { registerPushSubscription, unregisterPushSubscription } from './push-subscriptions.js';
import { setChannelMentionPolicy } from './set-channel-mention-policy.js';
import { setNotificationRule } from './set-notification-rule.js';
import { NotificationRule, NotificationSettings } from './settings-type.js';
import { updateNotificationSettings } from './update-notification-settings.js';
import { webPushPublicKey } from './web-push-public-key.js';

export const notificationResolvers: Resolvers = {
  Query: { notifications, notificationSettings, webPushPublicKey },
  Mutation: {
    updateNotificationSettings,
    setNotificationRule,
    setChannelMentionPolicy,
    markNotificationRead,
    markConversationNotificationsRead,
    markAllNotificationsRead,
    registerPushSubscription,
    unregisterPushSubscription,
  },
  Notification,
  NotificationSettings,
  NotificationRule,
  Conversation,
  Mentions,
  Workspace,
};
