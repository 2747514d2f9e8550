/**
 * The JSON scalar: any JSON value, passed through verbatim. Payloads, results, targets and labels
 * are user data, which must come back JSON-equal to what was sent, and request inputs are read by
 * the same domain readers as REST bodies, so GraphQL neither reshapes nor validates them on its own.
 */
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import type { JsonValue } from '@kairos/domain';

export const JsonScalar = new GraphQLScalarType<JsonValue, JsonValue>({
  name: 'JSON',
  description: 'Any JSON value (object, array, string, number, boolean or null), passed through unchanged.',
  serialize: (value) => value as JsonValue,
  parseValue: (value) => value as JsonValue,
  // undefined (an unset variable standing alone) makes GraphQL report the argument as invalid.
  parseLiteral: (ast, variables) => literalValue(ast, variables ?? undefined) as JsonValue,
});

/**
 * A JSON value written inline in the query; `$variables` inside it are substituted. An unset
 * variable drops its key from an object and is null in a list, as JSON.stringify does with undefined.
 */
function literalValue(ast: ValueNode, variables: Record<string, unknown> | undefined): JsonValue | undefined {
  switch (ast.kind) {
    case Kind.NULL:
      return null;
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.LIST:
      return ast.values.map((v) => literalValue(v, variables) ?? null);
    case Kind.OBJECT: {
      const entries = ast.fields.map((f) => [f.name.value, literalValue(f.value, variables)] as const);
      return Object.fromEntries(entries.filter(([, v]) => v !== undefined)) as JsonValue;
    }
    case Kind.VARIABLE:
      return variables?.[ast.name.value] as JsonValue | undefined;
    case Kind.ENUM:
      throw new GraphQLError(`JSON cannot hold the bare word ${ast.value}; quote it as a string`, { nodes: ast });
  }
}
