/**
 * The registry of named wire shapes. Each shape is declared once with zod; its name is the
 * OpenAPI component it becomes, so a shape used inside another is written there as a $ref.
 */
import { z } from 'zod';

export const WIRE_COMPONENTS = z.registry<{ id: string }>();

/**
 * Registers a shape as the component `id`, described by `description`. The metadata goes on the
 * shape itself rather than on a described copy, so a recursive shape's references to itself
 * reach the component.
 */
export function component<T extends z.ZodType>(id: string, schema: T, description?: string, examples?: readonly unknown[]): T {
  const meta = { ...z.globalRegistry.get(schema), ...(description === undefined ? {} : { description }), ...(examples === undefined ? {} : { examples: [...examples] }) };
  const registered: z.ZodType = schema;
  z.globalRegistry.add(registered, meta);
  WIRE_COMPONENTS.add(registered, { id });
  return schema;
}

/**
 * An optional request field the server fills in when it is absent. The default is stated in the
 * description rather than as the `default` keyword: generators (openapi-typescript among them)
 * type a property that has a `default` as always present, which would make it required in
 * request types.
 */
export function defaulted<T extends z.ZodType>(schema: T, value: string | number | boolean, description?: string): z.ZodOptional<T> {
  const said = `Default: ${JSON.stringify(value)}.`;
  return schema.describe(description ? `${description} ${said}` : said).optional() as z.ZodOptional<T>;
}

/** A page of a listing: its items and the cursor of the next page. */
export function page<T extends z.ZodType>(item: T, description: string) {
  return z
    .strictObject({
      items: z.array(item),
      nextCursor: z.string().nullable().describe('Pass as `cursor` to read the next page; null on the last page.'),
    })
    .describe(description);
}

/** The names of the registered query shapes: the document lists their fields as an operation's query parameters. */
export const QUERY_SHAPES = new Set<string>();

/** Registers the query parameters of an operation as `id`; each field is one parameter, described by its description. */
export function queryShape<T extends z.ZodObject>(id: string, shape: T): T {
  QUERY_SHAPES.add(id);
  return component(id, shape);
}
