/** One language's part of the evaluation set. */
export interface EvalLanguage {
  lang: string;
  /** Messages by key. */
  messages: Record<string, string>;
  /** Each query with the messages it must find; it must find no other message of the set. */
  queries: Array<{ kind: EvalKind; query: string; expect: string[] }>;
}

/**
 * `exact`: the word as written or a quoted phrase (precision and recall 1.00 required);
 * `inflected`, `compound`: another form of a word, a part of a compound (0.95 required);
 * `cjk`: a word or character of Japanese, Chinese or Korean (1.00 required).
 */
export type EvalKind = 'exact' | 'inflected' | 'compound' | 'cjk';
