// Row types added by migration 0006-messages (direct conversations and messages).

/**
 * The one DIRECT conversation of two people, per encryption mode: the unique key makes
 * `createConversation` reuse it even when both start one at the same moment.
 */
export interface DirectPairTable {
  /** `<smaller account id>:<larger account id>:<p|e>` (plain or encrypted). */
  pairKey: string;
  conversationId: string;
}
