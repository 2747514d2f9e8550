/**
 * Every error leaves the API as JSON { code, message, field }: domain refusals with their own code
 * and status, framework errors (malformed JSON, oversized bodies, unknown routes) translated into
 * the same shape, a ledger that cannot be reached as a 503 with Retry-After, anything unexpected
 * as a 500 that is logged and says nothing internal. GraphQL
 * operations get the same translation as a GraphQL error whose extensions carry code, field and
 * the status REST would have answered with.
 */
import { Catch, HttpException, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { GqlContextType } from '@nestjs/graphql';
import type { Response } from 'express';
import { GraphQLError } from 'graphql';
import { AccessError, ConflictError, NotFoundError, ValidationError } from '@kairos/domain';
import { isUnreachable } from '@kairos/ledger';
import type { ErrorBody } from '@kairos/domain/wire';
import type { z } from 'zod';

export type ApiError = z.output<typeof ErrorBody>;

@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Api');

  catch(error: unknown, host: ArgumentsHost): void {
    const type = host.getType<GqlContextType>();
    // Thrown, not returned: GraphQL execution turns it into an entry of `errors` (or, for a
    // subscription, the graphql-ws error message), keeping its extensions.
    if (type === 'graphql') throw this.toGraphqlError(error);
    if (type !== 'http') throw error;
    const response = host.switchToHttp().getResponse<Response>();
    const [status, body] = this.translate(error);
    if (status === HttpStatus.SERVICE_UNAVAILABLE) response.setHeader('Retry-After', '1');
    response.status(status).json(body);
  }

  toGraphqlError(error: unknown): GraphQLError {
    if (error instanceof GraphQLError) return error;
    const [status, body] = this.translate(error);
    return new GraphQLError(body.message, {
      originalError: error instanceof Error ? error : undefined,
      extensions: { code: body.code, field: body.field, status },
    });
  }

  translate(error: unknown): [number, ApiError] {
    const refusal = domainRefusal(error);
    if (refusal !== null) return refusal;
    if (error instanceof HttpException) return [error.getStatus(), this.framework(error)];
    const status = bodyParserStatus(error);
    if (status !== null) return [status, this.bodyParser(error as Error & { type?: string }, status)];
    // The ledger down, restarting or out of connections for longer than a request waits: the same
    // request may well succeed in a moment (those with an id or idempotency key are safe to repeat).
    if (isUnreachable(error)) {
      this.logger.warn(`ledger unavailable: ${(error as Error).message}`);
      return [HttpStatus.SERVICE_UNAVAILABLE, { code: 'UNAVAILABLE', message: 'the ledger cannot be reached or has no connection free right now; retry in a moment', field: null }];
    }
    this.logger.error((error as Error).stack ?? String(error));
    return [HttpStatus.INTERNAL_SERVER_ERROR, { code: 'INTERNAL', message: 'internal error; the server log has the details', field: null }];
  }

  private framework(error: HttpException): ApiError {
    const status = error.getStatus();
    const code = FRAMEWORK_CODES[status] ?? 'VALIDATION_FAILED';
    const response = error.getResponse();
    const message = typeof response === 'object' && response !== null && 'message' in response ? String(response.message) : error.message;
    return { code, message, field: null };
  }

  private bodyParser(error: Error & { type?: string }, status: number): ApiError {
    if (status === 413) return { code: 'PAYLOAD_TOO_LARGE', message: 'the request body exceeds 1 MB', field: null };
    if (status === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE', message: `the request body cannot be read: ${error.message}; send UTF-8 JSON`, field: null };
    return { code: 'VALIDATION_FAILED', message: `the request body is not valid JSON: ${error.message}`, field: null };
  }
}

/** A refusal of the domain (bad input, unknown, conflicting, forbidden) as its status and body; null for any other error. */
export function domainRefusal(error: unknown): [number, ApiError] | null {
  if (error instanceof ValidationError) {
    const status = error.code === 'PAYLOAD_TOO_LARGE' ? HttpStatus.PAYLOAD_TOO_LARGE : HttpStatus.BAD_REQUEST;
    return [status, { code: error.code, message: error.message, field: error.field }];
  }
  if (error instanceof NotFoundError) return [HttpStatus.NOT_FOUND, { code: error.code, message: error.message, field: null }];
  if (error instanceof ConflictError) return [HttpStatus.CONFLICT, { code: error.code, message: error.message, field: error.field }];
  if (error instanceof AccessError) {
    return [error.code === 'UNAUTHORIZED' ? HttpStatus.UNAUTHORIZED : HttpStatus.FORBIDDEN, { code: error.code, message: error.message, field: null }];
  }
  return null;
}

const FRAMEWORK_CODES: Record<number, ApiError['code']> = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/** Errors thrown by Express's body parser carry their HTTP status. */
function bodyParserStatus(error: unknown): number | null {
  if (typeof error === 'object' && error !== null && 'type' in error && 'status' in error && typeof error.status === 'number') {
    return error.status;
  }
  return null;
}
