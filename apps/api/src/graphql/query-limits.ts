/**
 * Limits on what one GraphQL operation may ask for, checked while the document is validated, before
 * anything resolves: how deep its selections nest, and how many fields it may resolve (aliases
 * and fragments counted; a field taking `limit` counts its selection once per item it may return).
 */
import { GraphQLError, Kind, type ASTVisitor, type FieldNode, type SelectionSetNode, type ValidationContext, type ValueNode } from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@kairos/domain/wire';

/** Deeper than any query the schema needs (a run, its attempts and events, their fields). */
export const MAX_QUERY_DEPTH = 10;
/** A full page of runs with their attempts and events fits; hundreds of aliased listings do not. */
export const MAX_QUERY_COST = 20_000;

interface Measure {
  depth: number;
  cost: number;
}

/** How many items a field may return: its `limit` (the largest page when a variable), a default page for a listing without one, else 1. */
function itemsOf(field: FieldNode): number {
  const limit = field.arguments?.find((a) => a.name.value === 'limit');
  if (limit) return literalInt(limit.value) ?? MAX_PAGE_SIZE;
  return field.selectionSet?.selections.some((s) => s.kind === Kind.FIELD && s.name.value === 'items') ? DEFAULT_PAGE_SIZE : 1;
}

function literalInt(value: ValueNode): number | null {
  return value.kind === Kind.INT ? Number(value.value) : null;
}

function measure(context: ValidationContext, set: SelectionSetNode, seen: Set<string>): Measure {
  let depth = 0;
  let cost = 0;
  for (const selection of set.selections) {
    let inner: Measure;
    if (selection.kind === Kind.FIELD) {
      const child = selection.selectionSet ? measure(context, selection.selectionSet, seen) : { depth: 0, cost: 0 };
      inner = { depth: child.depth + 1, cost: 1 + child.cost * itemsOf(selection) };
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(context, selection.selectionSet, seen);
    } else {
      const name = selection.name.value;
      const fragment = context.getFragment(name);
      // Unknown or cyclic fragments are reported by GraphQL's own rules.
      if (!fragment || seen.has(name)) continue;
      inner = measure(context, fragment.selectionSet, new Set([...seen, name]));
    }
    depth = Math.max(depth, inner.depth);
    cost += inner.cost;
  }
  return { depth, cost };
}

const LIMIT_CODES = new Set(['QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX']);

/** The code of a limit this rule reported, which Apollo wraps in its own GRAPHQL_VALIDATION_FAILED. */
export function queryLimitCode(error: unknown): string | null {
  const reported = error instanceof GraphQLError ? error.originalError : undefined;
  const code = reported instanceof GraphQLError ? reported.extensions.code : undefined;
  return typeof code === 'string' && LIMIT_CODES.has(code) ? code : null;
}

export function queryLimitsRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(operation) {
      const { depth, cost } = measure(context, operation.selectionSet, new Set());
      if (depth > MAX_QUERY_DEPTH) {
        context.reportError(
          new GraphQLError(`the operation nests ${depth} fields deep; at most ${MAX_QUERY_DEPTH} are allowed`, {
            nodes: [operation],
            extensions: { code: 'QUERY_TOO_DEEP', field: null, status: 400 },
          }),
        );
      } else if (cost > MAX_QUERY_COST) {
        context.reportError(
          new GraphQLError(`the operation may resolve ${cost} fields; at most ${MAX_QUERY_COST} are allowed: ask for fewer fields, aliases or items`, {
            nodes: [operation],
            extensions: { code: 'QUERY_TOO_COMPLEX', field: null, status: 400 },
          }),
        );
      }
    },
  };
}
