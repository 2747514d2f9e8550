/**
 * `kairos workers grant|credentials|revoke`: worker credentials, made and dropped directly in the
 * ledger. A credential's password is printed once, inside the URLs a worker connects with.
 */
import type { KairosConfig } from '@kairos/config';
import { ValidationError } from '@kairos/domain';
import { readWorkerCredentialCreate } from '@kairos/domain/wire';
import { NamespaceRepository, type Db } from '@kairos/ledger';
import { grantWorkerCredential, listWorkerCredentials, revokeWorkerCredential } from '@kairos/process/worker-credentials';
import { iso, table, type Output } from '../output.js';

export async function workersCommand(
  db: Db,
  config: KairosConfig,
  out: Output,
  args: string[],
  opts: { namespace: string; queues: string[]; json: boolean },
): Promise<number> {
  const [action, subject] = args;
  const namespace = await new NamespaceRepository().getByName(db, opts.namespace);
  if (!namespace) {
    out.line(`kairos: no namespace is named ${opts.namespace}`);
    return 1;
  }
  switch (action) {
    case 'grant': {
      const queues = opts.queues.flatMap((q) => q.split(',')).map((q) => q.trim()).filter(Boolean);
      if (queues.length === 0) throw new ValidationError('MISSING_FIELD', 'queue', 'grant needs the queues its workers serve: kairos workers grant --queue media [--queue ...]');
      const read = readWorkerCredentialCreate({ queues });
      const issued = await grantWorkerCredential(db, config, { namespaceId: namespace.id, namespace: opts.namespace, queues: read.queues, createdBy: 'cli' });
      if (opts.json) {
        out.line(JSON.stringify(issued, null, 2));
        return 0;
      }
      out.line(`DATABASE_URL=${issued.databaseUrl}`);
      if (issued.redis) out.line(`REDIS_URL=${issued.redis.url}`);
      out.line(`worker credential ${issued.role} for namespace ${issued.namespace}, queues ${issued.queues.join(', ')}; its password is shown only now.`);
      out.line(`it may call the worker protocol (versions ${issued.protocol.oldest} to ${issued.protocol.newest}) for those queues, and nothing else.`);
      if (issued.redis && !issued.redis.applied) out.line(`Redis refused to make the user; run this where it may:\n  ${issued.redis.command}`);
      else if (issued.redis) out.line(`Redis user ${issued.redis.user} may touch only the keys of those queues.`);
      return 0;
    }
    case 'credentials': {
      const rows = await listWorkerCredentials(db, namespace.id);
      if (opts.json) out.line(JSON.stringify(rows, null, 2));
      else out.line(table(['role', 'namespace', 'queues', 'created', 'by'], rows.map((c) => [c.role, c.namespace, c.queues.join(','), iso(c.createdAt), c.createdBy])));
      return 0;
    }
    case 'revoke': {
      if (subject === undefined) throw new ValidationError('MISSING_FIELD', 'role', 'revoke needs the credential role: kairos workers revoke <role>');
      await revokeWorkerCredential(db, config, subject, namespace.id);
      out.line(`revoked worker credential ${subject}; its sessions were ended`);
      return 0;
    }
    default:
      throw new ValidationError('VALIDATION_FAILED', 'workers', 'use: kairos workers grant|credentials|revoke');
  }
}
