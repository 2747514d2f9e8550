/** Everything that touches Postgres: the pool, migrations, and one repository per aggregate. */
export * from './database.js';
export * from './leases/holder-presence.js';
export * from './leases/lease.repository.js';
export * from './migrations/migrator.js';
export * from './namespaces/namespace.repository.js';
export * from './pagination.js';
export * from './runs/run-row.js';
export * from './runs/run.repository.js';
export * from './schedules/schedule-row.js';
export * from './schedules/schedule.repository.js';
export * from './sessions/session.repository.js';
export * from './startup.js';
export * from './schedules/slot-materializer.js';
export * from './fsck.js';
export * from './keys/api-key.repository.js';
export * from './outbox/outbox.repository.js';
