/**
 * GET /v1/runs/:id/stream: the run as server-sent events. One `event: run` with the run view at
 * once, then one at each change (state, progress, steps, checkpoints), and the response ends after
 * the view of the ended run. Comments (`: heartbeat`) every 15 s keep proxies from closing a quiet
 * stream; a client that disconnects stops the run's reads.
 */
import { Controller, Get, Logger, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { RunStreamService } from './run-stream.service.js';

/** How often a quiet stream carries a comment. */
export const RUN_STREAM_HEARTBEAT_MS = 15_000;

@Controller('v1/runs')
export class RunStreamController {
  private readonly logger = new Logger(RunStreamController.name);

  constructor(private readonly streams: RunStreamService) {}

  @Get(':id/stream')
  async stream(@Caller() caller: CallerContext, @Param('id') id: string, @Res() res: Response): Promise<void> {
    // An unknown run is refused here, before the headers: a JSON 404 as on every route.
    const feed = await this.streams.follow(caller, id);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    // nginx and its kin buffer responses unless told not to.
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const heartbeat = setInterval(() => {
      if (!res.destroyed && !res.writableEnded) res.write(': heartbeat\n\n');
    }, RUN_STREAM_HEARTBEAT_MS);
    // The client went away (or the response ended): stop reading the run.
    res.on('close', () => feed.close());
    try {
      for await (const view of feed) {
        if (res.destroyed) break;
        res.write(`event: run\ndata: ${JSON.stringify(view)}\n\n`);
      }
    } catch (error) {
      // The ledger could not be read: the stream ends, and the client reconnects.
      this.logger.warn(`the stream of run ${id} ended early: ${(error as Error).message}`);
    } finally {
      clearInterval(heartbeat);
      feed.close();
      if (!res.destroyed) res.end();
    }
  }
}
