/**
 * GraphQL's side of the batch routes: an item's refusal carries the code, message and field its
 * single mutation would have answered with (in its error's extensions).
 */
import { Field, ObjectType } from '@nestjs/graphql';
import type { ApiError } from '../errors/api-error.filter.js';
import { ErrorCodeEnum } from './wire.enums.js';

@ObjectType('BatchError', { description: 'Why an item of a batch was refused; nothing of it was stored.' })
export class BatchErrorType implements ApiError {
  @Field(() => ErrorCodeEnum) code!: ApiError['code'];
  @Field(() => String) message!: string;
  @Field(() => String, { nullable: true, description: 'The offending field of the item as a dotted path, or null.' }) field!: string | null;
}
