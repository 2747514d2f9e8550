/**
 * components.schemas of the OpenAPI document: the REST wire shapes declared in
 * `@kairos/domain/wire`, as JSON Schema. test/api/openapi.spec.ts validates real responses
 * against them.
 */
import { wireJsonSchemas } from '@kairos/domain/wire';
import type { SchemaObject } from './openapi.types.js';

export const SCHEMAS = wireJsonSchemas() as Record<string, SchemaObject>;

/** A reference to a component; a name no wire shape is registered under fails as the document is built. */
export function ref(name: string): SchemaObject {
  if (!(name in SCHEMAS)) throw new Error(`no wire shape is registered as the component ${name}`);
  return { $ref: `#/components/schemas/${name}` };
}
