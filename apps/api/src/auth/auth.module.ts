/** Authentication for every API surface: global, so Bull Board's middleware can use it too. */
import { Global, Module } from '@nestjs/common';
import { LoginSessionRepository } from '@kairos/ledger';
import { Authenticator } from './authenticator.js';
import { FirstAdminKeyService } from './first-admin-key.service.js';
import { LoginController } from './login.controller.js';

@Global()
@Module({
  controllers: [LoginController],
  providers: [Authenticator, FirstAdminKeyService, { provide: LoginSessionRepository, useValue: new LoginSessionRepository() }],
  exports: [Authenticator, LoginSessionRepository],
})
export class AuthModule {}
