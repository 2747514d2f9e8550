/**
 * The dashboard's first page: the last 24 hours of the namespace's runs, by the hour (runs per
 * outcome, failure rate, p95 duration, p95 lateness), and what waits on each queue now. Each chart
 * says what to do next when it has nothing to show.
 */
import { Link } from '../components/link.js';
import { Show, useLoad } from '../components/load.js';
import { BucketLine, OutcomeBars, QueueDepth } from '../components/charts.js';
import { kairosApi } from '../data/kairos-api.js';
import type { RunStatsBucket } from '../data/wire/index.js';
import { failureRate, formatTick, percent, total } from '../logic/charts.js';
import { formatElapsed } from '../logic/run-story.js';
import { pathOf } from '../logic/ui-route.js';

const HOUR_MS = 3_600_000;

/** A round tick as `2 s`, a measured value as `2.3 s`. */
const durationLabel = (ms: number) => (ms === 0 || ms % 1_000 === 0 ? formatTick(ms) : formatElapsed(ms));

export function OverviewPage() {
  const [stats] = useLoad(() => kairosApi.runStats({ bucket: '1h' }), []);
  const [queues] = useLoad(() => kairosApi.queues(), []);
  return (
    <>
      <h1>Overview</h1>
      <p class="lead">The runs that ended in the last 24 hours, by the hour (UTC), and what waits on each queue now.</p>
      <Show loaded={stats}>{(value) => (value === null ? <p>This API has no run statistics (GET /v1/stats/runs).</p> : <RunCharts buckets={value.buckets} />)}</Show>
      <section aria-labelledby="queue-depth">
        <h2 id="queue-depth">Queued per queue</h2>
        <Show loaded={queues}>
          {(value) =>
            value === null || value.length === 0 ? (
              <p class="empty">
                No queue has runs waiting, limits or live workers. Start a worker (<code>kairos worker</code>) or a run, and its queue appears here.
              </p>
            ) : (
              <QueueDepth queues={value} labelledBy="queue-depth" />
            )
          }
        </Show>
      </section>
    </>
  );
}

function RunCharts({ buckets }: { buckets: RunStatsBucket[] }) {
  const ended = buckets.reduce((sum, b) => sum + total(b), 0);
  if (buckets.length === 0 || ended === 0) {
    return (
      <section aria-labelledby="runs-per-hour">
        <h2 id="runs-per-hour">Runs per hour</h2>
        <p class="empty" data-testid="overview-empty">
          No run ended in the last 24 hours. <Link href={pathOf({ page: 'schedules' })}>Create a schedule</Link>, or start a run with{' '}
          <code>POST /v1/runs</code>; its outcome shows here once it ends.
        </p>
      </section>
    );
  }
  const failures = buckets.reduce((sum, b) => sum + b.failed + b.dead, 0);
  const rates = buckets.map(failureRate);
  return (
    <>
      <section aria-labelledby="runs-per-hour">
        <h2 id="runs-per-hour">Runs per hour</h2>
        <p data-testid="runs-summary">
          {ended} {ended === 1 ? 'run' : 'runs'} ended, {failures} failed or dead ({percent(failures / ended)}).
        </p>
        <OutcomeBars buckets={buckets} bucketMs={HOUR_MS} labelledBy="runs-per-hour" />
      </section>
      <section aria-labelledby="failure-rate">
        <h2 id="failure-rate">Failure rate</h2>
        <p class="muted">The share of each hour's runs that ended failed or dead.</p>
        <BucketLine buckets={buckets} bucketMs={HOUR_MS} labelledBy="failure-rate" values={rates} format={percent} kind="share" testId="failure-rate-line" />
      </section>
      <section aria-labelledby="p95-duration">
        <h2 id="p95-duration">p95 duration</h2>
        <p class="muted">95% of each hour's runs took at most this long, from their start to their end.</p>
        <BucketLine
          buckets={buckets}
          bucketMs={HOUR_MS}
          labelledBy="p95-duration"
          values={buckets.map((b) => b.durationP95Ms)}
          format={durationLabel}
          kind="duration"
          testId="duration-line"
        />
      </section>
      <section aria-labelledby="p95-lateness">
        <h2 id="p95-lateness">p95 lateness</h2>
        <p class="muted">95% of each hour's runs started at most this long after their slot.</p>
        <BucketLine
          buckets={buckets}
          bucketMs={HOUR_MS}
          labelledBy="p95-lateness"
          values={buckets.map((b) => b.latenessP95Ms)}
          format={durationLabel}
          kind="duration"
          testId="lateness-line"
        />
      </section>
    </>
  );
}
