import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature, type SignatureCheck } from './verify-signature.js';

const SECRET = 'whsec-current';
const OLD_SECRET = 'whsec-previous';
const BODY = '{"runId":"r1","payload":{"a":1}}';
const NOW_S = 1_800_000_000;
const sign = (secret: string, t: number, body = BODY): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

describe('verifySignature', () => {
  it.each<[string, string | undefined, string, number | undefined, SignatureCheck]>([
    ['a fresh delivery', `t=${NOW_S},v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: true, timestamp: NOW_S }],
    ['the current secret second of two', `t=${NOW_S},v1=${sign(OLD_SECRET, NOW_S)},v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: true, timestamp: NOW_S }],
    ['the current secret first of two', `t=${NOW_S},v1=${sign(SECRET, NOW_S)},v1=${sign(OLD_SECRET, NOW_S)}`, BODY, undefined, { valid: true, timestamp: NOW_S }],
    ['spaces after the commas', `t=${NOW_S}, v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: true, timestamp: NOW_S }],
    ['an unknown scheme beside v1', `t=${NOW_S},v0=abc,v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: true, timestamp: NOW_S }],
    ['a delivery 299 s old', `t=${NOW_S - 299},v1=${sign(SECRET, NOW_S - 299)}`, BODY, undefined, { valid: true, timestamp: NOW_S - 299 }],
    ['a tampered body', `t=${NOW_S},v1=${sign(SECRET, NOW_S)}`, BODY.replace('1', '2'), undefined, { valid: false, reason: 'NO_MATCHING_SIGNATURE' }],
    ['another secret only', `t=${NOW_S},v1=${sign(OLD_SECRET, NOW_S)}`, BODY, undefined, { valid: false, reason: 'NO_MATCHING_SIGNATURE' }],
    ['a signature over another timestamp', `t=${NOW_S},v1=${sign(SECRET, NOW_S - 1)}`, BODY, undefined, { valid: false, reason: 'NO_MATCHING_SIGNATURE' }],
    ['a delivery 301 s old', `t=${NOW_S - 301},v1=${sign(SECRET, NOW_S - 301)}`, BODY, undefined, { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' }],
    ['a delivery from the future', `t=${NOW_S + 301},v1=${sign(SECRET, NOW_S + 301)}`, BODY, undefined, { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' }],
    ['an hour-old delivery within a wider tolerance', `t=${NOW_S - 3600},v1=${sign(SECRET, NOW_S - 3600)}`, BODY, 7200, { valid: true, timestamp: NOW_S - 3600 }],
    ['no header', undefined, BODY, undefined, { valid: false, reason: 'MISSING_HEADER' }],
    ['no timestamp', `v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: false, reason: 'MALFORMED_HEADER' }],
    ['no v1', `t=${NOW_S}`, BODY, undefined, { valid: false, reason: 'MALFORMED_HEADER' }],
    ['a truncated v1', `t=${NOW_S},v1=${sign(SECRET, NOW_S).slice(0, 63)}`, BODY, undefined, { valid: false, reason: 'MALFORMED_HEADER' }],
    ['a timestamp that is not a number', `t=soon,v1=${sign(SECRET, NOW_S)}`, BODY, undefined, { valid: false, reason: 'MALFORMED_HEADER' }],
  ])('%s', (_name, header, body, toleranceSeconds, expected) => {
    expect(verifySignature({ secret: SECRET, header, body, toleranceSeconds, nowMs: NOW_S * 1000 })).toEqual(expected);
  });

  it('checks the raw bytes of a Buffer body', () => {
    const header = `t=${NOW_S},v1=${sign(SECRET, NOW_S)}`;
    expect(verifySignature({ secret: SECRET, header, body: Buffer.from(BODY), nowMs: NOW_S * 1000 }).valid).toBe(true);
  });
});
