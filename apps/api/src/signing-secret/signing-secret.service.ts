/**
 * The namespace's webhook signing secret: read by callers with write scope (who create the HTTP
 * targets it signs for), rotated by admins. After a rotation the previous secret keeps signing
 * beside the new one for KAIROS_SIGNING_SECRET_GRACE. Secrets are never logged.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { formatInstant } from '@kairos/domain';
import type { RotatedSigningSecret, SigningSecret } from '@kairos/domain/wire';
import { NamespaceRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG } from '@kairos/process';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';

export type SigningSecretView = z.output<typeof SigningSecret>;
export type RotatedSigningSecretView = z.output<typeof RotatedSigningSecret>;

@Injectable()
export class SigningSecretService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly namespaces: NamespaceRepository,
  ) {}

  async show(caller: CallerContext): Promise<SigningSecretView> {
    const secrets = await this.namespaces.signingSecrets(this.db, caller.namespaceId);
    return { secret: secrets!.secret };
  }

  async rotate(caller: CallerContext): Promise<RotatedSigningSecretView> {
    const rotated = await this.namespaces.rotateSigningSecret(this.db, caller.namespaceId, this.config.api.signingSecretGraceMs);
    return { secret: rotated!.secret, previousValidUntil: formatInstant(rotated!.previousValidUntil.getTime()) };
  }
}
