/**
 * The leader's limits loop: releases the runs that concurrency keys and queue limits hold back once
 * places are free, and the runs waiting for their version once a worker of it runs. A run leaving
 * `running` releases what it held in its own transaction, and a worker that registers the runs
 * waiting for it, so this loop is for what no such change frees: a queue's rate window sliding on,
 * and any release missed. It sleeps until the next window frees a place while a rate limit holds
 * runs, else a second.
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HeldRunsRepository, type Db } from '@kairos/ledger';
import { DATABASE, leaderActor } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';

const IDLE_MS = 1_000;
const SCOPES_PER_PASS = 200;

@Injectable()
export class LimitsService implements OnModuleInit {
  private readonly held = new HeldRunsRepository();

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    private readonly leadership: LeadershipService,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('Limits', IDLE_MS, async (term) => {
      await this.releaseOnce(leaderActor('scheduler', term.holder));
      const windowMs = await this.held.msUntilWindowFrees(this.db);
      return windowMs === null ? IDLE_MS : Math.min(IDLE_MS, Math.max(5, Math.ceil(windowMs) + 1));
    });
  }

  /** Releases held runs of every key and queue with free places, and of every version served; how many. Each release is a transaction of its own, holding one lock. */
  async releaseOnce(actor: string): Promise<number> {
    let released = 0;
    for (const scope of await this.held.heldScopes(this.db, SCOPES_PER_PASS)) released += await this.held.release(this.db, scope, actor);
    return released;
  }
}
