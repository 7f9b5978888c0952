/** Column type for millisecond timestamps and large counters on both dialects. */
export const MS = 'bigint' as const;
