/**
 * GraphQL object types of versions, field for field the REST wire shape of GET /v1/versions; each
 * class `implements` its view type, so the two cannot drift.
 */
import { Field, Int, ObjectType } from '@nestjs/graphql';
import type { VersionListView } from './versions.service.js';

type VersionView = VersionListView['items'][number];

@ObjectType('Version', { description: 'A version of the code on a queue: its live workers and the runs that need it. When activeRuns is 0 its last worker may be stopped.' })
export class VersionType implements VersionView {
  @Field(() => String) queue!: string;
  @Field(() => String, { description: "The workers' version (KairosWorker's `version`)." }) version!: string;
  @Field(() => Int, { description: 'Live workers of the queue running this version: seen in the last minute and not stopped.' }) workers!: number;
  @Field(() => Int, { description: "Runs of the caller's namespace on the queue claimed by this version that have not ended." }) activeRuns!: number;
  @Field(() => Int, { description: 'Of those, the runs held until a worker of their version runs (deferReason VERSION_UNAVAILABLE).' }) pinnedWaiting!: number;
}

@ObjectType('VersionList')
export class VersionListType implements VersionListView {
  @Field(() => [VersionType], { description: 'By queue, then version.' }) items!: VersionType[];
}
