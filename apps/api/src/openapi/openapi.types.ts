/**
 * The part of the OpenAPI 3.1 object model the Kairos document uses, so its paths and operations
 * are checked by the compiler. Schemas are JSON Schema 2020-12, OpenAPI 3.1's own dialect, generated
 * from the wire declarations in @kairos/domain/wire.
 */

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

export interface SchemaObject {
  $ref?: string;
  title?: string;
  description?: string;
  type?: JsonType | JsonType[];
  format?: string;
  enum?: readonly (string | number | boolean | null)[];
  const?: string | number | boolean | null;
  default?: unknown;
  examples?: readonly unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, SchemaObject>;
  required?: readonly string[];
  additionalProperties?: boolean | SchemaObject;
  propertyNames?: SchemaObject;
  maxProperties?: number;
  items?: SchemaObject;
  oneOf?: readonly SchemaObject[];
  anyOf?: readonly SchemaObject[];
  allOf?: readonly SchemaObject[];
  not?: SchemaObject;
  readOnly?: boolean;
  deprecated?: boolean;
}

export interface ReferenceObject {
  $ref: string;
  summary?: string;
  description?: string;
}

export interface ExampleObject {
  summary?: string;
  description?: string;
  value: unknown;
}

export interface MediaTypeObject {
  schema: SchemaObject;
  examples?: Record<string, ExampleObject>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  description?: string;
  required?: boolean;
  schema: SchemaObject;
  example?: unknown;
}

export interface RequestBodyObject {
  description?: string;
  required?: boolean;
  content: Record<string, MediaTypeObject>;
}

export interface ResponseObject {
  description: string;
  content?: Record<string, MediaTypeObject>;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: (ParameterObject | ReferenceObject)[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | ReferenceObject>;
  security?: SecurityRequirementObject[];
}

export type HttpVerb = 'get' | 'put' | 'post' | 'delete' | 'patch';

export type PathItemObject = Partial<Record<HttpVerb, OperationObject>> & { parameters?: (ParameterObject | ReferenceObject)[] };

export interface SecuritySchemeObject {
  type: 'http';
  scheme: 'bearer';
  bearerFormat?: string;
  description?: string;
}

/** Scheme name to the roles (here: API key scopes) it needs; `{}` means no credentials. */
export type SecurityRequirementObject = Record<string, string[]>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string; license?: { name: string; identifier?: string } };
  jsonSchemaDialect?: string;
  tags?: { name: string; description?: string }[];
  security?: SecurityRequirementObject[];
  paths: Record<string, PathItemObject>;
  components: {
    securitySchemes?: Record<string, SecuritySchemeObject>;
    schemas: Record<string, SchemaObject>;
    parameters?: Record<string, ParameterObject>;
    responses?: Record<string, ResponseObject>;
  };
}
