import { NotFoundError } from '@kairos/domain';
import { NamespaceRepository, type Db } from '@kairos/ledger';

/** The id of the namespace the CLI was asked to work in (--namespace, "default" unless given). */
export async function namespaceId(db: Db, name: string): Promise<string> {
  const namespace = await new NamespaceRepository().getByName(db, name);
  if (!namespace) throw new NotFoundError('namespace', name);
  return namespace.id;
}
