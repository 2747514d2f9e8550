/**
 * GraphQL at /graphql, mirroring the REST resources and their wire shapes: a code-first schema built in
 * memory, queries and mutations over HTTP, and the runEvents subscription over graphql-ws on the
 * same path. Errors are shaped by the API's one error filter; formatError only catches what
 * bypassed it, so no internal message leaves the process.
 */
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule } from '@nestjs/graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { KairosConfig } from '@kairos/config';
import { KAIROS_CONFIG } from '@kairos/process';
import { ApiErrorFilter } from '../errors/api-error.filter.js';
import type { GraphqlContext, KairosRequest } from '../auth/request-context.js';
import { queryLimitCode, queryLimitsRule } from './query-limits.js';

const errors = new ApiErrorFilter();

/**
 * Apollo calls the context function with the Express request; graphql-ws with its own context,
 * whose `extra.request` is the WebSocket upgrade request. Either way the caller guard finds `req`.
 */
function graphqlContext(source: {
  req?: KairosRequest;
  extra?: { request: KairosRequest };
  connectionParams?: { authorization?: unknown };
}): GraphqlContext {
  if (source.req) return { req: source.req };
  // Browsers cannot set headers on a WebSocket: a subscription may carry its key in connectionParams.
  const request = source.extra!.request;
  const authorization = source.connectionParams?.authorization;
  if (typeof authorization === 'string' && request.headers.authorization === undefined) request.headers.authorization = authorization;
  return { req: request };
}

/** Errors already shaped by ApiErrorFilter carry a status; GraphQL's own (syntax, validation, variables) keep Apollo's codes. */
function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const limit = queryLimitCode(error);
  if (limit !== null) return { ...formatted, extensions: { ...formatted.extensions, code: limit } };
  if (formatted.extensions?.status !== undefined) return formatted;
  const original = unwrapResolverError(error);
  if (original instanceof GraphQLError) return formatted;
  const shaped = errors.toGraphqlError(original);
  return { ...formatted, message: shaped.message, extensions: shaped.extensions };
}

export const GraphqlServerModule = GraphQLModule.forRootAsync<ApolloDriverConfig>({
  driver: ApolloDriver,
  inject: [KAIROS_CONFIG],
  useFactory: (config: KairosConfig): ApolloDriverConfig => ({
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    context: graphqlContext,
    subscriptions: { 'graphql-ws': true },
    // Field resolvers (Run.events) get the caller and the error shape like any operation.
    fieldResolverEnhancers: ['guards', 'filters'],
    // One error translation: the API's filter, not Nest's HttpException-to-GraphQL mapping.
    autoTransformHttpErrors: false,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The schema is public in the REST sense (the OpenAPI document is too), but production
    // deployments need not advertise it; KAIROS_GRAPHQL_INTROSPECTION decides.
    introspection: config.api.graphqlIntrospection,
    validationRules: [queryLimitsRule],
    // No GraphiQL page: it loads its scripts from a CDN, and Kairos serves nothing that needs the internet.
    graphiql: false,
  }),
});
