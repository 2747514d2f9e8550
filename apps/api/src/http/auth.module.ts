/** Authentication for every API surface: global, so Bull Board's middleware can use it too. */
import { Global, Module } from '@nestjs/common';
import { LoginSessionRepository } from '@kairos/ledger';
import { Authenticator } from './authenticator.js';

@Global()
@Module({ providers: [Authenticator, { provide: LoginSessionRepository, useValue: new LoginSessionRepository() }], exports: [Authenticator, LoginSessionRepository] })
export class AuthModule {}
