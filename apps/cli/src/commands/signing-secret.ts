/** `kairos signing-secret show|rotate`: the namespace's webhook signing secret, read or rotated directly in the ledger. */
import type { KairosConfig } from '@kairos/config';
import { ValidationError, formatInstant } from '@kairos/domain';
import { NamespaceRepository, type Db } from '@kairos/ledger';
import type { Output } from '../output.js';

export async function signingSecretCommand(db: Db, config: KairosConfig, out: Output, args: string[], opts: { namespace: string; json: boolean }): Promise<number> {
  const namespaces = new NamespaceRepository();
  const namespace = await namespaces.getByName(db, opts.namespace);
  if (!namespace) {
    out.line(`kairos: no namespace is named ${opts.namespace}`);
    return 1;
  }
  switch (args[0]) {
    case 'show': {
      const { secret } = (await namespaces.signingSecrets(db, namespace.id))!;
      out.line(opts.json ? JSON.stringify({ secret }, null, 2) : secret);
      return 0;
    }
    case 'rotate': {
      const rotated = (await namespaces.rotateSigningSecret(db, namespace.id, config.api.signingSecretGraceMs))!;
      const previousValidUntil = formatInstant(rotated.previousValidUntil.getTime());
      if (opts.json) out.line(JSON.stringify({ secret: rotated.secret, previousValidUntil }, null, 2));
      else {
        out.line(rotated.secret);
        out.line(`the previous secret of ${opts.namespace} keeps signing deliveries beside this one until ${previousValidUntil}`);
      }
      return 0;
    }
    default:
      throw new ValidationError('VALIDATION_FAILED', 'signing-secret', 'use: kairos signing-secret show|rotate [--namespace N]');
  }
}
