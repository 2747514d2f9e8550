/** The namespace's webhook signing secret over REST and GraphQL: read it, rotate it. */
import { Module } from '@nestjs/common';
import { SigningSecretController } from './signing-secret.controller.js';
import { SigningSecretResolver } from './signing-secret.resolver.js';
import { SigningSecretService } from './signing-secret.service.js';

@Module({ controllers: [SigningSecretController], providers: [SigningSecretService, SigningSecretResolver] })
export class SigningSecretModule {}
