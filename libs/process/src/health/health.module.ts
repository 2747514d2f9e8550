/** Terminus health checks, served by every process: liveness, and readiness of Postgres, the transport and the leader. */
import { Controller, Get, Inject, Injectable, Module, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import type { Transport } from '@kairos/queue';
import { describeDatabase, type KairosConfig } from '@kairos/config';
import { LeaseRepository, SCHEDULER_LEASE, type Db } from '@kairos/ledger';
import { PublicRoute } from '../public-route.js';
import { DATABASE, KAIROS_CONFIG, TRANSPORT } from '../tokens.js';

@Injectable()
export class LedgerHealth {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Db,
    private readonly leases: LeaseRepository,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
  ) {}

  async postgres() {
    const check = this.indicators.check('postgres');
    try {
      await this.db.query('SELECT 1');
      return check.up({ database: describeDatabase(this.config) });
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }

  /** A leader whose lease is alive: the tick loop is being driven by someone. */
  async leader() {
    const check = this.indicators.check('leader');
    try {
      const lease = await this.leases.current(this.db, SCHEDULER_LEASE);
      if (lease?.alive) return check.up({ holder: lease.holder, epoch: lease.epoch, expiresAt: lease.expiresAt });
      return check.down({
        message: `no scheduler holds the leader lease (a scheduler takes it within ${this.config.scheduler.leaderTtlMs} ms of starting)`,
      });
    } catch (error) {
      return check.down({ message: (error as Error).message });
    }
  }
}

@Injectable()
export class TransportHealth {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(TRANSPORT) private readonly transport: Transport,
  ) {}

  /** `redis` on Redis (as before the Postgres transport existed), `transport` on Postgres; each says where. */
  async transportCheck() {
    const check = this.indicators.check(this.transport.config.kind === 'redis' ? 'redis' : 'transport');
    const transport = this.transport.description;
    try {
      await this.transport.ping();
      return check.up({ transport, ...(this.transport.config.kind === 'redis' && { shards: this.transport.shards }) });
    } catch (error) {
      return check.down({ transport, message: (error as Error).message });
    }
  }
}

@PublicRoute()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly ledger: LedgerHealth,
    private readonly transport: TransportHealth,
  ) {}

  /** The process is up and its event loop answers. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * 200 when Postgres, the transport and a leader are all up; 503 otherwise, with Terminus's report
   * of each check (what is down, where, and why) as the body, whatever error shape the API uses.
   */
  @Get('ready')
  @HealthCheck()
  async ready(@Res({ passthrough: true }) response: Response) {
    try {
      return await this.health.check([() => this.ledger.postgres(), () => this.transport.transportCheck(), () => this.ledger.leader()]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      response.status(error.getStatus());
      return error.getResponse();
    }
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [LedgerHealth, TransportHealth],
})
export class HealthModule {}
