/** The address policy HTTP targets are checked against at declaration, shared by schedules and runs. */
import { Module } from '@nestjs/common';
import { AddressPolicy } from '@kairos/domain';
import { ADDRESS_POLICY_PROVIDER } from './target-address.js';

@Module({ providers: [ADDRESS_POLICY_PROVIDER], exports: [AddressPolicy] })
export class TargetsModule {}
