/** `kairos keys`: create, list and revoke API keys. A key is shown once, when it is created. */
import { API_SCOPES, ValidationError, issueApiKey, type ApiScope } from '@kairos/domain';
import { ApiKeyRepository, DEFAULT_NAMESPACE, type Db } from '@kairos/ledger';
import { iso, table, type Output } from '../output.js';

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export async function keysCommand(
  db: Db,
  out: Output,
  args: string[],
  opts: { namespace: string | undefined; scopes: string; name?: string; json: boolean },
): Promise<number> {
  const keys = new ApiKeyRepository();
  const [action, subject] = args;
  switch (action) {
    case 'create': {
      const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
      if (!NAMESPACE.test(namespace)) {
        throw new ValidationError('VALIDATION_FAILED', 'namespace', '--namespace must be lowercase letters, digits, "-" and "_", starting with a letter or digit');
      }
      const scopes = opts.scopes.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
      if (scopes.length === 0 || unknown.length > 0) {
        throw new ValidationError('VALIDATION_FAILED', 'scopes', `--scopes must list some of ${API_SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      }
      const namespaceId = await keys.ensureNamespace(db, namespace);
      const issued = issueApiKey();
      const name = opts.name ?? `${namespace}-${issued.prefix}`;
      await keys.create(db, { namespaceId, name, prefix: issued.prefix, secretHash: issued.secretHash, scopes: scopes as ApiScope[] });
      if (opts.json) out.line(JSON.stringify({ key: issued.token, prefix: issued.prefix, name, namespace, scopes }, null, 2));
      else {
        out.line(issued.token);
        out.line(`key ${issued.prefix} (${name}) for namespace ${namespace} with ${scopes.join(', ')}; it is shown only now.`);
      }
      return 0;
    }
    case 'list': {
      const rows = await keys.list(db, opts.namespace);
      if (opts.json) {
        out.line(JSON.stringify(rows.map(({ secretHash: _hash, ...row }) => row), null, 2));
        return 0;
      }
      out.line(
        table(
          ['prefix', 'name', 'namespace', 'scopes', 'created', 'last used', 'revoked'],
          rows.map((k) => [k.prefix, k.name, k.namespace, k.scopes.join(','), iso(k.createdAt), iso(k.lastUsedAt), iso(k.revokedAt)]),
        ),
      );
      return 0;
    }
    case 'revoke': {
      if (subject === undefined) throw new ValidationError('MISSING_FIELD', 'prefix', 'revoke needs the key prefix: kairos keys revoke <prefix>');
      if (!(await keys.revoke(db, subject))) {
        out.line(`kairos: no live key has the prefix ${subject}`);
        return 1;
      }
      out.line(`revoked key ${subject}`);
      return 0;
    }
    default:
      throw new ValidationError('VALIDATION_FAILED', 'keys', 'use: kairos keys create|list|revoke');
  }
}
