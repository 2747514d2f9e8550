/** `kairos fsck`: prints every broken ledger invariant; exits 1 when there is one. */
import { fsck, type Db } from '@kairos/ledger';
import { table, type Output } from '../output.js';

export async function fsckCommand(db: Db, out: Output, json: boolean): Promise<number> {
  const violations = await fsck(db);
  if (json) out.line(JSON.stringify(violations, null, 2));
  else if (violations.length === 0) out.line('ledger ok: no invariant is broken');
  else out.line(table(['check', 'subject', 'detail'], violations.map((v) => [v.check, v.subject, v.detail])));
  return violations.length === 0 ? 0 : 1;
}
