import {
  getNamedType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';

// Documents that select every field of every type reachable from a root field, generated from a
// schema (the served SDL), so a new type or field is walked without editing a test.

/** Nesting past which a selection takes only fields that need no selection of their own. */
const MAX_DEPTH = 12;

/** Supplies a value for an argument; `undefined` leaves an optional argument out. */
export type ArgumentSource = (owner: string, field: string, arg: GraphQLArgument) => unknown;

export interface WalkDocument {
  root: string;
  query: string;
  variables: Record<string, unknown>;
  /** `Type.field` of every field the document selects. */
  selected: Set<string>;
  /** The variable each argument of the root field is passed in. */
  rootVariables: Record<string, string>;
}

export class MissingArgument extends Error {}

export type OperationKind = 'query' | 'mutation' | 'subscription';

/**
 * One document for the root field `root` of `operation` (a query unless said): every object
 * type met is expanded whole the first time (then only `__typename` and its leaf fields), unions
 * and interfaces through an inline fragment per possible type. Arguments come from `source` as
 * variables.
 */
export function walkDocument(
  schema: GraphQLSchema,
  root: string,
  source: ArgumentSource,
  operation: OperationKind = 'query',
): WalkDocument {
  const query = rootType(schema, operation);
  const expanded = new Set<string>();
  const selected = new Set<string>();
  const variables: Record<string, unknown> = {};
  const declarations: string[] = [];

  const rootVariables: Record<string, string> = {};
  const argumentsOf = (owner: string, field: GraphQLField<unknown, unknown>): string | null => {
    const parts: string[] = [];
    for (const arg of field.args) {
      const value = source(owner, field.name, arg);
      if (value === undefined) {
        if (isNonNullType(arg.type) && arg.defaultValue === undefined) {
          throw new MissingArgument(
            `no value for the required argument ${owner}.${field.name}(${arg.name}: ${String(arg.type)}): add one to the walk's argument source`,
          );
        }
        continue;
      }
      const name = `v${declarations.length}`;
      declarations.push(`$${name}: ${String(arg.type)}`);
      variables[name] = value;
      if (owner === query.name) rootVariables[arg.name] = name;
      parts.push(`${arg.name}: $${name}`);
    }
    return parts.length ? `(${parts.join(', ')})` : '';
  };

  const fieldsOf = (type: GraphQLObjectType, depth: number): string => {
    const full = !expanded.has(type.name) && depth < MAX_DEPTH;
    if (full) expanded.add(type.name);
    const out: string[] = ['__typename'];
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      const leaf = isScalarType(named) || isEnumType(named);
      if (!full && !leaf) continue;
      let args: string | null;
      try {
        args = argumentsOf(type.name, field);
      } catch (err) {
        if (!full) continue;
        throw err;
      }
      selected.add(`${type.name}.${field.name}`);
      out.push(`${field.name}${args}${leaf ? '' : ` ${selection(named, depth + 1)}`}`);
    }
    return out.join(' ');
  };

  const selection = (type: GraphQLNamedType, depth: number): string => {
    if (isObjectType(type)) return `{ ${fieldsOf(type, depth)} }`;
    if (isAbstractType(type)) {
      const parts = schema
        .getPossibleTypes(type)
        .map((t) => `... on ${t.name} { ${fieldsOf(t, depth)} }`);
      return `{ __typename ${parts.join(' ')} }`;
    }
    return '';
  };

  const field = query.getFields()[root];
  if (!field) throw new Error(`no root ${operation} field ${root}`);
  const args = argumentsOf(query.name, field);
  selected.add(`${query.name}.${root}`);
  const named = getNamedType(field.type);
  const body = `${root}${args} ${selection(named, 1)}`;
  const header = declarations.length ? `(${declarations.join(', ')})` : '';
  return {
    root,
    query: `${operation} Walk${header} { ${body} }`,
    variables,
    selected,
    rootVariables,
  };
}

/** The root type of an operation kind (throws when the schema has none). */
export function rootType(schema: GraphQLSchema, operation: OperationKind): GraphQLObjectType {
  const type =
    operation === 'query'
      ? schema.getQueryType()
      : operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!type) throw new Error(`the schema has no ${operation} type`);
  return type;
}

/** Every `Type.field` of every object type reachable from the query root. */
export function reachableFields(schema: GraphQLSchema): Set<string> {
  const out = new Set<string>();
  const seen = new Set<string>();
  const visit = (type: GraphQLNamedType) => {
    if (seen.has(type.name)) return;
    seen.add(type.name);
    if (isObjectType(type)) {
      for (const f of Object.values(type.getFields())) {
        out.add(`${type.name}.${f.name}`);
        visit(getNamedType(f.type));
      }
    } else if (isAbstractType(type)) {
      for (const t of schema.getPossibleTypes(type)) visit(t);
    }
  };
  visit(schema.getQueryType()!);
  return out;
}

/** The first value of an enum input type, or a list of it: a value any argument of it takes. */
export function someEnumValue(type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return [someEnumValue(inner.ofType as GraphQLInputType)];
  if (isEnumType(inner)) return inner.getValues()[0]!.name;
  if (isInputObjectType(inner)) return {};
  return undefined;
}
