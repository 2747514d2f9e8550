/** A schedule's deadline (expect.succeededWithin) and its lateness in words, for the schedules list and a schedule's page. */
import type { Schedule } from '../data/wire/index.js';
import { instantInWords } from './sensor-evaluations.js';
import { durationInWords } from './spec-words.js';

/** What each slot's run is expected to do: "each slot's run succeeds within 10 minutes of the slot", or that nothing is. */
export function expectInWords(expect: Schedule['expect']): string {
  return expect === null ? 'nothing: no deadline is watched' : `each slot's run succeeds within ${durationInWords(expect.succeededWithin)} of the slot`;
}

/**
 * Why a schedule is late, for its badge's tooltip. A lateness lasts from its first late slot
 * (`lateSince`) until a slot's run succeeds in time again, so later late slots do not move it.
 */
export function lateInWords(lateSince: string, expect: Schedule['expect']): string {
  const deadline = expect === null ? 'in time' : `within ${durationInWords(expect.succeededWithin)}`;
  return `The run of the ${instantInWords(lateSince)} slot did not succeed ${deadline}, and no slot's run has since.`;
}
