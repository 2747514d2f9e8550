/** Dead letters over REST and GraphQL: runs that ended dead, read and republished through the runs use cases. */
import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module.js';
import { DeadLettersController } from './dead-letters.controller.js';
import { DeadLettersResolver } from './dead-letters.resolver.js';

@Module({ imports: [RunsModule], controllers: [DeadLettersController], providers: [DeadLettersResolver] })
export class DeadLettersModule {}
