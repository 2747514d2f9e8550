/**
 * The tour of docs/getting-started.md ("A first schedule") through the client @hey-api/openapi-ts
 * generates from the served document (./client/, generated next to a copy of this file). It prints
 * what each step answered; the `@ts-expect-error` lines fail the type check when the generated
 * types are too loose to refuse a wrong request.
 */
import { client } from './client/client.gen.js';
import { createSchedule, listRuns, listScheduleTicks, pauseSchedule, previewCron } from './client/sdk.gen.js';
import type { Run } from './client/types.gen.js';

client.setConfig({ baseUrl: process.argv[2] });
const echo = { type: 'handler', name: 'echo' } as const;

async function tour(): Promise<Record<string, unknown>> {
  // @ts-expect-error a schedule needs a target
  void (() => createSchedule({ body: { every: '1s' } }));
  // @ts-expect-error paused is a boolean
  void (() => createSchedule({ body: { every: '1s', target: echo, paused: 'yes' } }));

  const created = await createSchedule({ body: { every: '1s', target: echo } });
  if (!created.data) throw new Error(`create answered ${created.response.status}`);
  const id: string = created.data.id;

  let runs: Run[] = [];
  for (const deadline = Date.now() + 15_000; runs.length === 0 && Date.now() < deadline; ) {
    const page = await listRuns({ query: { scheduleId: id, limit: 3 } });
    runs = page.data?.items.filter((run) => run.state === 'succeeded') ?? [];
    if (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }

  const ticks = await listScheduleTicks({ path: { id } });
  const preview = await previewCron({ body: { cron: '30 2 * * *', timezone: 'Europe/Berlin', after: '2027-03-26T00:00:00Z', count: 5 } });
  const paused = await pauseSchedule({ path: { id } });
  const refused = await previewCron({ body: { cron: '0 0 * * 8' } });

  return {
    created: { status: created.response.status, every: created.data.every, timezone: created.data.timezone, overlap: created.data.overlap },
    runs: runs.map((run) => ({ state: run.state, scheduleId: run.scheduleId })),
    ticks: ticks.data?.items.map((tick) => tick.outcome),
    preview: preview.data?.fireTimes,
    paused: paused.data?.status,
    refused: refused.error && { status: refused.response.status, code: refused.error.code, field: refused.error.field },
  };
}

process.stdout.write(JSON.stringify(await tour()));
