import { DEFAULT_NAMESPACE, NamespaceRepository, type Db } from '@kairos/ledger';

/** The CLI works in the default namespace. */
export async function defaultNamespaceId(db: Db): Promise<string> {
  return (await new NamespaceRepository().getByName(db, DEFAULT_NAMESPACE))!.id;
}
