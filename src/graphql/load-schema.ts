import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  buildSchema,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLEnumType,
  lexicographicSortSchema,
  printSchema,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';

import type { Resolvers } from './resolver-types.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Reads the SDL files (one per area), in name order so the printed schema is stable. */
export function readSdl(dir = path.join(here, 'schema')): string {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
}

/**
 * Builds the executable schema: the SDL with each resolver attached to its field. A resolver for
 * a field the SDL lacks is a programming error and stops boot.
 */
export function buildExecutableSchema(sdl: string, resolvers: Resolvers): GraphQLSchema {
  const schema = buildSchema(sdl);
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!type) throw new Error(`resolvers given for unknown type ${typeName}`);
    if (type instanceof GraphQLScalarType) {
      Object.assign(type, fields);
      continue;
    }
    if (type instanceof GraphQLEnumType) {
      for (const [name, value] of Object.entries(fields as Record<string, unknown>)) {
        const v = type.getValue(name);
        if (!v) throw new Error(`enum value ${typeName}.${name} is not in the schema`);
        v.value = value;
      }
      // Rebuild the lookup tables graphql-js keeps for serializing values.
      (type as unknown as { _valueLookup: Map<unknown, unknown> })._valueLookup = new Map(
        type.getValues().map((v) => [v.value, v]),
      );
      continue;
    }
    if (!(type instanceof GraphQLObjectType)) {
      if ('__resolveType' in (fields as object)) {
        Object.assign(type, { resolveType: (fields as { __resolveType: unknown }).__resolveType });
        continue;
      }
      throw new Error(`cannot attach resolvers to ${typeName}`);
    }
    const schemaFields = type.getFields();
    for (const [fieldName, resolver] of Object.entries(fields as Record<string, unknown>)) {
      const field = schemaFields[fieldName];
      if (!field) throw new Error(`resolver for unknown field ${typeName}.${fieldName}`);
      if (typeof resolver === 'function') {
        field.resolve = resolver as GraphQLFieldResolver<unknown, unknown>;
      } else if (resolver && typeof resolver === 'object') {
        const r = resolver as {
          resolve?: GraphQLFieldResolver<unknown, unknown>;
          subscribe?: GraphQLFieldResolver<unknown, unknown>;
        };
        if (r.resolve) field.resolve = r.resolve;
        if (r.subscribe) field.subscribe = r.subscribe;
      }
    }
  }
  return schema;
}

/** The SDL served at GET /api/sdl: the running build's schema, printed in a stable order. */
export function printPublicSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema));
}
