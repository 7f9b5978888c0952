import type { Logger } from 'pino';

import type { MessageTable } from '../../db/tables/messages.js';

/** Work another area does after a message's text was stored (link previews, ...). */
export type MessageTextHook = (message: MessageTable) => void;

/**
 * In-process hooks on committed message text: `created` after a new plaintext message commits,
 * `edited` after an edit that changed the text commits. They run after the commit and must not
 * block: a hook starts its own work and returns at once, so the send is never delayed. A hook
 * that throws is logged and skipped. They are not events: they run on the process that stored
 * the message and are not redelivered after a crash.
 */
export class MessageHooks {
  private readonly createdHooks: MessageTextHook[] = [];
  private readonly editedHooks: MessageTextHook[] = [];

  constructor(private readonly log: Logger) {}

  onCreated(hook: MessageTextHook): void {
    this.createdHooks.push(hook);
  }

  onEdited(hook: MessageTextHook): void {
    this.editedHooks.push(hook);
  }

  created(message: MessageTable): void {
    this.run(this.createdHooks, message);
  }

  edited(message: MessageTable): void {
    this.run(this.editedHooks, message);
  }

  private run(hooks: readonly MessageTextHook[], message: MessageTable): void {
    for (const hook of hooks) {
      try {
        hook(message);
      } catch (err) {
        this.log.error({ err, messageId: message.id }, 'message hook failed');
      }
    }
  }
}
