import { describe, expect, it } from 'vitest';
import { placement, type QueueShape } from './job-order.js';

const shape = (listed: number | null, prioritized: boolean): QueueShape => ({ listed, prioritized });

describe("a run's job placed by its priority", () => {
  it.each<[number, QueueShape, ReturnType<typeof placement>, string]>([
    [3, shape(null, false), {}, 'the default priority on a queue without prioritized jobs: the plain list, as before priorities'],
    [3, shape(10, false), {}, 'the default priority behind plain jobs: the plain list, in order'],
    [3, shape(null, true), { priority: 3 }, 'the default priority while prioritized jobs wait: the set, behind runs of 1 and 2'],
    [4, shape(0, false), { priority: 4 }, 'priority 4: the set, taken once the plain list is empty'],
    [5, shape(10, false), { priority: 5 }, 'priority 5 behind plain jobs: the set, after them'],
    [5, shape(0, true), { priority: 5 }, 'priority 5 among prioritized jobs: the set, ordered'],
    [1, shape(0, false), { priority: 1 }, 'priority 1 on an empty list: the set, ahead of all in it'],
    [2, shape(0, true), { priority: 2 }, 'priority 2 with prioritized jobs waiting: the set, ordered'],
    [1, shape(5, false), { lifo: true }, 'priority 1 behind plain jobs of priority 3: the head of the list, ahead of them'],
    [2, shape(5, true), { lifo: true }, 'priority 2 behind plain jobs: the head of the list'],
    [1, shape(null, true), { priority: 1 }, 'priority 1 where the list was not read (a repair): the set'],
  ])('priority %i on %j → %j: %s', (priority, queue, expected) => {
    expect(placement(priority, queue)).toEqual(expected);
  });
});
