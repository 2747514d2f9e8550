import { describe, expect, it } from 'vitest';
import { KairosWorker, KairosWorkerError } from './kairos-worker.js';

const handlers = { noop: async () => null };

describe('KairosWorker options', () => {
  it.each([['pinned'], ['auto'], [undefined]])('takes upgrade %s', (upgrade) => {
    expect(() => new KairosWorker({ handlers, upgrade: upgrade as 'pinned' | 'auto' | undefined })).not.toThrow();
  });

  it.each([
    ['Auto', 'upgrade must be "pinned" or "auto" (got "Auto")'],
    ['always', 'upgrade must be "pinned" or "auto" (got "always")'],
    ['', 'upgrade must be "pinned" or "auto" (got "")'],
    [true, 'upgrade must be "pinned" or "auto" (got true)'],
    [null, 'upgrade must be "pinned" or "auto" (got null)'],
  ])('refuses upgrade %j, naming the option', (upgrade, message) => {
    const make = () => new KairosWorker({ handlers, upgrade: upgrade as unknown as 'pinned' });
    expect(make).toThrow(KairosWorkerError);
    expect(make).toThrow(message);
  });
});
