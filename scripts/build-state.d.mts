/** The server's apps, each built to dist/apps/<app>/src/main.js. */
export const SERVER_APPS: readonly ['kairos', 'api', 'scheduler', 'worker', 'cli'];
/** True when an app's entry point is missing or older than a source the server is built from. */
export function isServerStale(root: string): boolean;
/** True when dist/ui is missing or older than a file of apps/ui or the lockfile. */
export function isUiStale(root: string): boolean;
