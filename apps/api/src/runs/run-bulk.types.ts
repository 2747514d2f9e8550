/** The GraphQL answer of bulkRuns, field for field the REST RunBulkResult. */
import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import type { RunBulkOutcome } from './runs-bulk.service.js';

@ObjectType('RunBulkResult', { description: 'What a bulk cancel or retry matched and did (POST /v1/runs/bulk).' })
export class RunBulkResultType implements RunBulkOutcome {
  @Field(() => Int, { description: 'Runs the filter matched that the action acts on: cancel the active ones, retry those /retry accepts.' }) matched!: number;
  @Field(() => Int, { description: 'Runs cancelled (or asked to stop) or retried; 0 on a dry run.' }) acted!: number;
  @Field(() => [ID], { description: 'Up to 10 ids of runs acted on (a dry run: that would be), oldest first.' }) sample!: string[];
}
