/**
 * Nesting limits checked before anything walks a request recursively: a value nested thousands of
 * levels deep would otherwise exhaust the stack of every recursive reader (validation, hashing,
 * GraphQL's parser) and answer 500 instead of a 400 naming the field.
 */

/** How deep a JSON body (or a GraphQL document) may nest: far beyond any real payload. */
export const MAX_JSON_DEPTH = 64;

/**
 * The path to the first value nested deeper than `limit` (the root object or array is level 1),
 * or null. Iterative, so it is safe on any input JSON.parse accepted.
 */
export function tooDeepPath(value: unknown, limit = MAX_JSON_DEPTH): (string | number)[] | null {
  const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value, depth: 0, path: [] }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return path;
    const entries: [string | number, unknown][] = Array.isArray(current) ? current.map((v, i) => [i, v]) : Object.entries(current);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, path: [...path, key] });
    }
  }
  return null;
}

/**
 * The deepest nesting of brackets ({ [ ( ) in a GraphQL document, outside strings and comments:
 * selection sets, argument lists and input literals alike. Cheap, and checked before the parser.
 */
export function graphqlNestingDepth(document: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < document.length; i++) {
    const c = document[i];
    if (c === '#') {
      while (i < document.length && document[i] !== '\n') i++;
    } else if (c === '"') {
      if (document.startsWith('"""', i)) {
        const end = document.indexOf('"""', i + 3);
        i = end === -1 ? document.length : end + 2;
      } else {
        for (i++; i < document.length && document[i] !== '"' && document[i] !== '\n'; i++) if (document[i] === '\\') i++;
      }
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
  return deepest;
}
