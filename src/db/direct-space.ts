/**
 * The id of the one direct space, which holds every direct and group conversation. Migration
 * 0002 created its row with this id and keeps its own copy (a landed migration is never edited,
 * and does not follow later code); code takes the id from here.
 */
export const DIRECT_SPACE_ID = '00000000-0000-7000-8000-000000000000';
