/**
 * The REST wire shapes, each declared once with zod: the API types its views by them and builds
 * the OpenAPI document's components from them. Reached as `@kairos/domain/wire`, apart from the
 * rest of the domain, so what only needs the domain (the SDK among them) does not load zod.
 */
import { z } from 'zod';
import { QUERY_SHAPES, WIRE_COMPONENTS } from './registry.js';
import { JsonValue } from './shared.js';

export { readWire } from './read.js';
export * from './shared.js';
export * from './requests.js';
export * from './responses.js';
export * from './queries.js';
export * from './queues.js';
export * from './sensors.js';
export * from './subscriptions.js';
export * from './calendars.js';
export * from './events.js';
export * from './runs-bulk.js';
export * from './versions.js';

/** A JSON Schema 2020-12 object, OpenAPI 3.1's own dialect. */
export type JsonSchema = Record<string, unknown>;

/** A query parameter of an operation: its name, what it means, and the values it takes. */
export interface QueryParameter {
  name: string;
  required?: true;
  description?: string;
  schema: JsonSchema;
}

/**
 * Every registered shape as JSON Schema, by component name, each reference to another written as
 * `#/components/schemas/<name>`; the query shapes apart, as the parameters they declare.
 */
export function wireJsonSchemas(): { schemas: Record<string, JsonSchema>; queries: Record<string, QueryParameter[]> } {
  const { schemas } = z.toJSONSchema(WIRE_COMPONENTS, {
    target: 'draft-2020-12',
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      // A request body is parsed JSON, so any value of it is JSON; and openapi-typescript cannot
      // type the self-referencing union that would spell that out. The document says it in prose.
      if (zodSchema === JsonValue) delete jsonSchema.anyOf;
      // zod bounds every integer to the safe range; JSON has no such limit to state.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  });
  // Inside the document each schema is a component, not a standalone resource with its own id.
  const components = Object.entries(schemas).map(([name, { $schema: _schema, $id: _id, ...schema }]) => [name, referencesOnly(schema) as JsonSchema] as const);
  return {
    schemas: Object.fromEntries(components.filter(([name]) => !QUERY_SHAPES.has(name))),
    queries: Object.fromEntries(components.filter(([name]) => QUERY_SHAPES.has(name)).map(([name, shape]) => [name, parametersOf(shape)])),
  };
}

function parametersOf(shape: JsonSchema): QueryParameter[] {
  const required = new Set((shape.required as string[] | undefined) ?? []);
  return Object.entries(shape.properties as Record<string, JsonSchema>).map(([name, { description, ...schema }]) => ({
    name,
    ...(required.has(name) ? { required: true } : {}),
    ...(description === undefined ? {} : { description: description as string }),
    schema,
  }));
}

/**
 * A reference to a component says what it refers to and, at most, what this use of it means: a
 * refined use of a component (a payload with its size limit) comes out of zod with the
 * component's keywords copied beside the $ref, which the component already states.
 */
function referencesOnly(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(referencesOnly);
  if (node === null || typeof node !== 'object') return node;
  const entries = Object.entries(node);
  if ('$ref' in node) return Object.fromEntries(entries.filter(([key]) => key === '$ref' || key === 'description'));
  return Object.fromEntries(entries.map(([key, value]) => [key, key === 'examples' ? value : referencesOnly(value)]));
}

/**
 * The JSON Schema of a `kairos apply` file (`kairos schema`), from the same declarations the API
 * validates with: a source and its schedules, each a schedule body with its name. Editors that
 * read JSON Schema complete and check the YAML with it.
 */
export function applyFileJsonSchema(): JsonSchema {
  const { schemas } = wireJsonSchemas();
  const defs = JSON.parse(JSON.stringify(schemas).replaceAll('"#/components/schemas/', '"#/$defs/')) as Record<string, JsonSchema>;
  const request = defs.ApplyRequest as { properties: Record<string, JsonSchema> };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Kairos apply file',
    description: "A source's declaration of schedules, sensors and calendars, for `kairos apply -f FILE` (YAML or JSON).",
    type: 'object',
    properties: {
      source: request.properties.source,
      schedules: {
        type: 'array',
        description: 'Each a body of POST /v1/schedules with its name.',
        items: { allOf: [{ $ref: '#/$defs/ScheduleCreate' }, { required: ['name'] }] },
      },
      sensors: {
        type: 'array',
        description: 'Each a body of POST /v1/sensors (no paused).',
        items: { $ref: '#/$defs/SensorCreate' },
      },
      calendars: {
        type: 'array',
        description: 'Each a body of POST /v1/calendars, written before the schedules, which may name them; a prune never deletes one.',
        items: { $ref: '#/$defs/CalendarCreate' },
      },
    },
    required: ['source'],
    additionalProperties: false,
    $defs: defs,
  };
}
