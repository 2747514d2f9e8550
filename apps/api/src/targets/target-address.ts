/** Refuses, when a schedule or run is declared, an HTTP target whose URL names a forbidden address literally. */
import type { Provider } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { AddressPolicy, callsOf, ValidationError, type Target } from '@kairos/domain';
import { KAIROS_CONFIG } from '@kairos/process';

/** The worker's policy, built from the same allow-list, so what the API accepts the worker may call. */
export const ADDRESS_POLICY_PROVIDER: Provider = {
  provide: AddressPolicy,
  inject: [KAIROS_CONFIG],
  useFactory: (config: KairosConfig) => new AddressPolicy(config.worker.httpAllowList),
};

export function assertTargetAddressAllowed(policy: AddressPolicy, executable: Target): void {
  for (const { target, field } of callsOf(executable)) {
    if (target.type !== 'http') continue;
    const refusal = policy.urlRefusal(target.url);
    if (refusal) throw new ValidationError('INVALID_TARGET', `${field}.url`, refusal);
  }
}
