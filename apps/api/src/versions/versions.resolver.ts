/** GraphQL for the versions in flight; the same use case as REST. */
import { Query, Resolver } from '@nestjs/graphql';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { VersionListType } from './version.types.js';
import { VersionsService } from './versions.service.js';

@Resolver()
export class VersionsResolver {
  constructor(private readonly service: VersionsService) {}

  @Query(() => VersionListType, { description: 'GET /v1/versions' })
  versions(@Caller() caller: CallerContext) {
    return this.service.list(caller);
  }
}
