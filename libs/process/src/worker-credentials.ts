/**
 * Granting and revoking worker credentials, for the CLI (`kairos workers grant`) and the API
 * (POST /v1/worker-credentials) alike: a Postgres login that may call only the worker protocol for
 * one namespace and its queues and, when the queues live on Redis, a Redis user limited to those
 * queues' keys. A leaf (`@kairos/process/worker-credentials`): the CLI imports it without Nest.
 */
import type { KairosConfig } from '@kairos/config';
import { WorkerCredentialRepository, credentialUrl, type Db, type WorkerCredential } from '@kairos/ledger';
import { applyWorkerAcl, bullPrefix, workerAclCommand, workerAclRules, workerRedisUrl } from '@kairos/queue';

export interface IssuedWorkerCredentialView extends WorkerCredential {
  databaseUrl: string;
  redis: { user: string; url: string; command: string; applied: boolean } | null;
  protocol: { oldest: number; newest: number };
}

type CredentialConfig = Pick<KairosConfig, 'databaseUrl' | 'transport' | 'queuePrefix'>;

const credentials = new WorkerCredentialRepository();

export async function grantWorkerCredential(
  db: Db,
  config: CredentialConfig,
  grant: { namespaceId: string; namespace: string; queues: readonly string[]; createdBy: string },
): Promise<IssuedWorkerCredentialView> {
  const transport = config.transport;
  const { password, ...credential } = await credentials.grant(db, { ...grant, transportSchema: transport.kind === 'postgres' ? transport.schema : null });
  let redis: IssuedWorkerCredentialView['redis'] = null;
  if (transport.kind === 'redis') {
    const rules = workerAclRules(password, bullPrefix(transport, config.queuePrefix), config.queuePrefix, credential.queues);
    redis = {
      user: credential.role,
      url: workerRedisUrl(transport.url, credential.role, password),
      command: workerAclCommand(credential.role, rules),
      applied: await applyWorkerAcl(transport, credential.role, rules),
    };
  }
  const { rows } = await db.query<{ oldest: number; newest: number }>(`SELECT oldest, newest FROM kairos_worker.protocol_versions()`);
  return { ...credential, databaseUrl: credentialUrl(config.databaseUrl, { role: credential.role, password }), redis, protocol: rows[0]! };
}

/** Drops the login (ending its sessions) and, on Redis, its user. */
export async function revokeWorkerCredential(db: Db, config: CredentialConfig, role: string, namespaceId?: string): Promise<void> {
  await credentials.revoke(db, role, namespaceId);
  if (config.transport.kind === 'redis') await applyWorkerAcl(config.transport, role, null);
}

export function listWorkerCredentials(db: Db, namespaceId?: string): Promise<WorkerCredential[]> {
  return credentials.list(db, namespaceId);
}
