/**
 * Postgres notifications the scheduler wakes on: a schedule changed (SCHEDULES_CHANNEL), a limit
 * released runs it held (RELEASED_CHANNEL), a sensor's evaluation ended (SENSORS_CHANNEL). Each is
 * only an optimisation: the loops they wake also poll, so a notification lost while the listening
 * connection was down costs latency, never work.
 */
import pg from 'pg';

/** Sent by kairos_release_held (migration 0018) when it released held runs. */
export const RELEASED_CHANNEL = 'kairos_released';
/** Sent when an evaluation run of a sensor ends, with the sensor's id. */
export const SENSORS_CHANNEL = 'kairos_sensors';

export interface Listener {
  close(): Promise<void>;
}

/**
 * LISTENs on `channel` on a dedicated connection, calling `onNotify` for each notification;
 * reconnects after errors until closed. With no session-capable URL (a pooler's DATABASE_URL and no
 * DATABASE_DIRECT_URL) it listens to nothing, and the loops it would wake rely on their polling.
 */
export function listenTo(databaseUrl: string | null, channel: string, onNotify: (payload: string) => void): Listener {
  if (databaseUrl === null) return { close: async () => undefined };
  let stopping = false;
  let client: pg.Client | null = null;
  const loop = async (): Promise<void> => {
    while (!stopping) {
      const current = new pg.Client({ connectionString: databaseUrl, application_name: `kairos-listen-${channel}` });
      current.on('error', () => undefined);
      try {
        await current.connect();
        await current.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        current.on('notification', (message) => onNotify(message.payload ?? ''));
        client = current;
        if (!stopping) {
          await new Promise<void>((resolve) => {
            current.once('error', () => resolve());
            current.once('end', () => resolve());
          });
        }
      } catch {
        // Postgres is away: the loops still poll.
      }
      client = null;
      await current.end().catch(() => undefined);
      if (!stopping) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  void loop();
  return {
    async close() {
      stopping = true;
      await (client as pg.Client | null)?.end().catch(() => undefined);
    },
  };
}
