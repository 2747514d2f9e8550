/** Authentication for every API surface: global, so Bull Board's middleware can use it too. */
import { Global, Module } from '@nestjs/common';
import { Authenticator } from './authenticator.js';

@Global()
@Module({ providers: [Authenticator], exports: [Authenticator] })
export class AuthModule {}
