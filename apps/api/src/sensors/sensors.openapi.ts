/** The sensor routes of the OpenAPI document. */
import { body, json, operation, param } from '../openapi/openapi.operations.js';
import { queryParameters } from '../openapi/openapi.schemas.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

const SENSOR_EXAMPLES = {
  handler: {
    summary: 'New invoices every 30 seconds, each imported once',
    value: {
      name: 'new-invoices',
      every: '30s',
      target: { type: 'handler', name: 'list-new-invoices', queue: 'billing' },
      run: { target: { type: 'handler', name: 'import-invoice', queue: 'billing' }, retry: { maxAttempts: 5 }, timeout: '2m' },
      payload: { bucket: 'invoices' },
      labels: { team: 'billing' },
    },
  },
  all: {
    summary: 'Every field',
    value: {
      name: 'partner-drops',
      every: '1m',
      target: { type: 'handler', name: 'echo' },
      timeout: '30s',
      run: {
        steps: [
          { name: 'fetch', target: { type: 'handler', name: 'echo' } },
          { name: 'notify', dependsOn: ['fetch'], target: { type: 'http', url: 'https://example.com/hook' } },
        ],
        retry: { maxAttempts: 3, backoff: { type: 'exponential', base: '10s', max: '5m', jitter: 0.1 } },
        timeout: '5m',
        concurrency: { key: 'partner-{{payload.partner}}', limit: 1 },
      },
      payload: { prefix: 'drops/' },
      paused: false,
      labels: { team: 'partners' },
    },
  },
};

export const SENSOR_PATHS: Record<string, PathItemObject> = {
  '/v1/sensors': {
    post: operation({
      operationId: 'createSensor',
      tags: ['sensors'],
      summary: 'Declare a sensor',
      description:
        "Stores the sensor, due at once (unless paused): every `every` the scheduler runs its `target` handler (origin sensor) with the cursor and payload, within `timeout` (default 1m, at most 1h). The handler answers `{ runs: [{ runKey, payload }], cursor }`; the runs it asks for (each executing `run`, origin sensor) and the new cursor are committed in one transaction, a run key the sensor asked for before making no new run. Its `target` must be a handler (INVALID_TARGET otherwise) a worker registered.",
      requestBody: body('SensorCreate', true, SENSOR_EXAMPLES),
      ok: { 201: json('Sensor', 'Created.') },
      errors: [400, 409, 413],
    }),
    get: operation({
      operationId: 'listSensors',
      tags: ['sensors'],
      summary: 'List sensors',
      parameters: queryParameters('PageQuery'),
      ok: { 200: json('SensorPage', 'A page of sensors, newest first.') },
      errors: [400],
    }),
  },
  '/v1/sensors/{id}': {
    get: operation({
      operationId: 'getSensor',
      tags: ['sensors'],
      summary: 'Read a sensor',
      parameters: [param('SensorId')],
      ok: { 200: json('Sensor', 'The sensor.') },
      errors: [404],
    }),
    patch: operation({
      operationId: 'patchSensor',
      tags: ['sensors'],
      summary: 'Change some fields of a sensor',
      description: 'The given fields replace the stored ones (`run` field by field); the cursor stays. A new name must be free in the namespace (409 otherwise).',
      parameters: [param('SensorId')],
      requestBody: body('SensorPatch'),
      ok: { 200: json('Sensor', 'The sensor after the change.') },
      errors: [400, 404, 409, 413],
    }),
    delete: operation({
      operationId: 'deleteSensor',
      tags: ['sensors'],
      summary: 'Delete a sensor',
      description: 'Deletes the sensor with its ticks and run keys; the runs it made stay. An evaluation under way runs to its end and commits nothing.',
      parameters: [param('SensorId')],
      ok: { 204: { description: 'Deleted; no body.' } },
      errors: [404],
    }),
  },
  '/v1/sensors/{id}/pause': {
    post: operation({
      operationId: 'pauseSensor',
      tags: ['sensors'],
      summary: 'Pause a sensor',
      description: 'No evaluation starts while it is paused; one under way runs to its end. Pausing a paused sensor changes nothing.',
      parameters: [param('SensorId')],
      ok: { 200: json('Sensor', 'The paused sensor.') },
      errors: [404],
    }),
  },
  '/v1/sensors/{id}/resume': {
    post: operation({
      operationId: 'resumeSensor',
      tags: ['sensors'],
      summary: 'Resume a paused sensor',
      description: 'It is due at once. Resuming an active sensor changes nothing.',
      parameters: [param('SensorId')],
      ok: { 200: json('Sensor', 'The active sensor.') },
      errors: [404],
    }),
  },
  '/v1/sensors/{id}/ticks': {
    get: operation({
      operationId: 'listSensorTicks',
      tags: ['sensors'],
      summary: 'The evaluations of a sensor',
      parameters: [param('SensorId'), ...queryParameters('PageQuery')],
      ok: { 200: json('SensorTickPage', 'A page of ticks, newest first.') },
      errors: [400, 404],
    }),
  },
  '/v1/sensors/{id}/cursor': {
    post: operation({
      operationId: 'setSensorCursor',
      tags: ['sensors'],
      summary: "Move a sensor's cursor",
      description: 'Sets the cursor and raises its version: an evaluation under way when it moved commits nothing (SENSOR_CURSOR_MOVED), and the next one starts from here.',
      parameters: [param('SensorId')],
      requestBody: body('SensorCursorRequest', true, { move: { summary: 'Start after a known object', value: { cursor: { after: 'invoices/2026-01-31.csv' } } } }),
      ok: { 200: json('Sensor', 'The sensor with its new cursor.') },
      errors: [400, 404, 413],
    }),
  },
  '/v1/sensors/{id}/reset': {
    post: operation({
      operationId: 'resetSensor',
      tags: ['sensors'],
      summary: 'Restart a sensor from a cursor',
      description:
        'Sets the cursor (default null) and raises its version, as moving it does; with forgetRunKeys, also forgets the run keys the sensor asked for, so asking for them again makes new runs.',
      parameters: [param('SensorId')],
      requestBody: body('SensorResetRequest', false),
      ok: { 200: json('Sensor', 'The sensor with its cursor reset.') },
      errors: [400, 404, 413],
    }),
  },
};
