/** The signing-secret routes of the OpenAPI document. */
import { json, operation } from '../openapi/openapi.operations.js';
import type { PathItemObject } from '../openapi/openapi.types.js';

export const SIGNING_SECRET_PATHS: Record<string, PathItemObject> = {
  '/v1/signing-secret': {
    get: operation({
      operationId: 'getSigningSecret',
      tags: ['signing-secret'],
      summary: "The namespace's webhook signing secret (write scope)",
      description: 'Kairos-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> is made with this secret.',
      ok: { 200: json('SigningSecret', 'The current secret.') },
      errors: [],
    }),
  },
  '/v1/signing-secret/rotate': {
    post: operation({
      operationId: 'rotateSigningSecret',
      tags: ['signing-secret'],
      summary: 'Rotate the signing secret (admin scope)',
      description: 'For the grace window (KAIROS_SIGNING_SECRET_GRACE, 24h by default) deliveries carry one v1 signature per secret, new and previous.',
      ok: { 200: json('RotatedSigningSecret', 'The new secret, and until when the previous one still signs.') },
      errors: [],
    }),
  },
};
