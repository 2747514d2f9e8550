/**
 * The versions of the code in flight, for the caller's namespace: per queue and version, the live
 * workers and the runs that still need that version. Workers are not namespaced (GET /v1/workers
 * lists them all), so every namespace sees every live worker; the runs are the caller's own.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { VersionList } from '@kairos/domain/wire';
import { WorkerRepository, type Db } from '@kairos/ledger';
import { DATABASE } from '@kairos/process';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';

export type VersionListView = z.output<typeof VersionList>;

@Injectable()
export class VersionsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly workers: WorkerRepository,
  ) {}

  async list(caller: CallerContext): Promise<VersionListView> {
    return { items: await this.workers.versions(this.db, caller.namespaceId) };
  }
}
