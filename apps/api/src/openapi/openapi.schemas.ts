/**
 * components.schemas of the OpenAPI document and the query parameters of its operations: the REST
 * wire shapes declared in `@kairos/domain/wire`, as JSON Schema. test/api/openapi.spec.ts validates
 * real responses against them.
 */
import { wireJsonSchemas } from '@kairos/domain/wire';
import type { ParameterObject, SchemaObject } from './openapi.types.js';

const WIRE = wireJsonSchemas();

export const SCHEMAS = WIRE.schemas as Record<string, SchemaObject>;

/** The query parameters the query shape `name` declares; a name no query shape is registered under fails as the document is built. */
export function queryParameters(name: string): ParameterObject[] {
  const parameters = WIRE.queries[name];
  if (!parameters) throw new Error(`no query shape is registered as ${name}`);
  return parameters.map((parameter) => ({ ...parameter, in: 'query', schema: parameter.schema as SchemaObject }));
}

/** A reference to a component; a name no wire shape is registered under fails as the document is built. */
export function ref(name: string): SchemaObject {
  if (!(name in SCHEMAS)) throw new Error(`no wire shape is registered as the component ${name}`);
  return { $ref: `#/components/schemas/${name}` };
}
