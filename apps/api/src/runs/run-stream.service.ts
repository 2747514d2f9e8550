/** Following a run as it changes (GET /v1/runs/:id/stream, the runUpdated subscription). */
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { NotFoundError } from '@kairos/domain';
import { RunRepository, type Db } from '@kairos/ledger';
import { DATABASE } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { RunViewFeed } from './run-view-feed.js';
import { runViews } from './run.view.js';

@Injectable()
export class RunStreamService implements BeforeApplicationShutdown {
  /** Open feeds, closed before the ledger pool is, so no poll outlives it and no stream holds the server open. */
  private readonly feeds = new Set<RunViewFeed>();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly runs: RunRepository,
  ) {}

  /**
   * The run's view now, then at each change, ending after the view of the ended run. Refuses an
   * unknown run (or one of another namespace) at once, before anything is streamed.
   */
  async follow(caller: CallerContext, id: string): Promise<RunViewFeed> {
    if (!(await this.runs.get(this.db, caller.namespaceId, id))) throw new NotFoundError('run', id);
    const feed: RunViewFeed = new RunViewFeed(
      async () => {
        const row = await this.runs.get(this.db, caller.namespaceId, id);
        return row ? (await runViews(this.db, this.runs, [row]))[0]! : null;
      },
      () => this.feeds.delete(feed),
    );
    this.feeds.add(feed);
    return feed;
  }

  beforeApplicationShutdown(): void {
    for (const feed of [...this.feeds]) feed.close();
  }
}
