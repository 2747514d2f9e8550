/**
 * When keys are required and no live admin key exists, the first API process to start issues one
 * for the default namespace and prints it once, so a fresh deployment is usable without a shell
 * on its database. Replicas starting together issue a single key (see createFirstAdminKey).
 */
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { issueApiKey } from '@kairos/domain';
import { ApiKeyRepository, DEFAULT_NAMESPACE, inTransaction, type Db } from '@kairos/ledger';
import { DATABASE, DEFAULT_NAMESPACE_ID, KAIROS_CONFIG } from '@kairos/process';
import { JsonLogger, logsJson } from '@kairos/telemetry';

@Injectable()
export class FirstAdminKeyService implements OnApplicationBootstrap {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(DEFAULT_NAMESPACE_ID) private readonly defaultNamespaceId: string,
    private readonly keys: ApiKeyRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.api.auth !== 'required') return;
    const issued = issueApiKey();
    const name = `first-admin-${issued.prefix}`;
    const created = await inTransaction(this.db, (tx) =>
      this.keys.createFirstAdminKey(tx, { namespaceId: this.defaultNamespaceId, name, prefix: issued.prefix, secretHash: issued.secretHash }),
    );
    if (!created) return;
    // Straight to stdout, whatever LOG_LEVEL says: the key exists nowhere else. In JSON logging it
    // is one JSON line like every other, with the key in its message.
    const intro = `Kairos issued the first admin API key (namespace "${DEFAULT_NAMESPACE}", key ${issued.prefix}); it is shown only now:`;
    const how = 'Send it as "Authorization: Bearer <key>". More keys: npm run kairos -- keys create --namespace <name> --scopes read,write';
    if (logsJson(this.config)) {
      const stdout = { write: (line: string) => process.stdout.write(line) };
      new JsonLogger('log', this.config.roles.join(','), stdout).log({ msg: `${intro} ${issued.token}. ${how}` }, 'FirstAdminKey');
      return;
    }
    process.stdout.write([intro, `  ${issued.token}`, `  ${how}`, ''].join('\n'));
  }
}
