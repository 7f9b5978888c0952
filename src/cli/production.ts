/**
 * The `svc` binary runs its dependencies in production mode unless `NODE_ENV` says otherwise
 * (docs/configuration.md). graphql-js reads it once, when it loads: outside production every
 * failed type check of its executor (`isEnumType`, `isListType`, … on every field of every
 * result) also looks the value's class name up, to warn about two copies of graphql, which made
 * a page of 30 messages cost about a sixth more instructions (bench `instructions`). Imported
 * first by cli/index.ts, so that it runs before anything imports graphql.
 */
process.env.NODE_ENV ??= 'production';
