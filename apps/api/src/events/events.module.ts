/** Events over REST and GraphQL: what applications emit, stored with the runs and resumed waits each starts. */
import { Module } from '@nestjs/common';
import { EventRepository, FlowControlRepository } from '@kairos/ledger';
import { EventsController } from './events.controller.js';
import { EventsResolver } from './events.resolver.js';
import { EventsService } from './events.service.js';

@Module({ controllers: [EventsController], providers: [EventsService, EventsResolver, { provide: EventRepository, useValue: new EventRepository() }, { provide: FlowControlRepository, useValue: new FlowControlRepository() }], exports: [EventsService] })
export class EventsModule {}
