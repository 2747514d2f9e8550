/** Injection tokens for the resources every Kairos process shares. */
export const KAIROS_CONFIG = Symbol('KAIROS_CONFIG');
export const DATABASE = Symbol('DATABASE');
/** The database's clock (a DatabaseClock), the one clock that decides when. */
export const DATABASE_CLOCK = Symbol('DATABASE_CLOCK');
/** The queues' transport (Redis or Postgres), opened once per process. */
export const TRANSPORT = Symbol('TRANSPORT');
/** The id of the namespace requests use when no API key names another. */
export const DEFAULT_NAMESPACE_ID = Symbol('DEFAULT_NAMESPACE_ID');
