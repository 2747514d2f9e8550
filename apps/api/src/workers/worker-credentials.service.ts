/**
 * Worker credentials of the caller's namespace (admin scope): a login for workers of some queues
 * that may call only the worker protocol, made, listed and dropped.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { formatInstant } from '@kairos/domain';
import { readWorkerCredentialCreate, type IssuedWorkerCredential, type WorkerCredentialList } from '@kairos/domain/wire';
import { NamespaceRepository, type Db, type WorkerCredential } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG } from '@kairos/process';
import { grantWorkerCredential, listWorkerCredentials, revokeWorkerCredential } from '@kairos/process/worker-credentials';
import type { z } from 'zod';
import type { CallerContext } from '../auth/request-context.js';

function credentialView(c: WorkerCredential) {
  return { role: c.role, namespace: c.namespace, queues: c.queues, createdAt: formatInstant(c.createdAt.getTime()), createdBy: c.createdBy };
}

@Injectable()
export class WorkerCredentialsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly namespaces: NamespaceRepository,
  ) {}

  async grant(caller: CallerContext, body: unknown): Promise<z.output<typeof IssuedWorkerCredential>> {
    const { queues } = readWorkerCredentialCreate(body);
    const namespace = (await this.namespaces.getById(this.db, caller.namespaceId))!;
    const issued = await grantWorkerCredential(this.db, this.config, { namespaceId: namespace.id, namespace: namespace.name, queues, createdBy: caller.actor });
    return { ...credentialView(issued), databaseUrl: issued.databaseUrl, redis: issued.redis, protocol: issued.protocol };
  }

  async list(caller: CallerContext): Promise<z.output<typeof WorkerCredentialList>> {
    return { items: (await listWorkerCredentials(this.db, caller.namespaceId)).map(credentialView) };
  }

  revoke(caller: CallerContext, role: string): Promise<void> {
    return revokeWorkerCredential(this.db, this.config, role, caller.namespaceId);
  }
}
