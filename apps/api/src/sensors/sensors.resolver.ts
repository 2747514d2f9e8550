/** GraphQL for sensors: each field reads its arguments like the REST route does and calls the same use case. */
import { Args, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { JsonValue } from '@kairos/domain';
import { PageQuery, readQuery } from '@kairos/domain/wire';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { JsonScalar } from '../graphql/json.scalar.js';
import { SensorPageType, SensorTickPageType, SensorType } from './sensor.types.js';
import { SensorsService } from './sensors.service.js';

const id = () => ID;
const optionalInt = { type: () => Int, nullable: true } as const;
const optionalString = { type: () => String, nullable: true } as const;
const optionalJson = { type: () => JsonScalar, nullable: true } as const;

@Resolver(() => SensorType)
export class SensorsResolver {
  constructor(private readonly sensors: SensorsService) {}

  @Query(() => SensorType, { description: 'GET /v1/sensors/:id' })
  sensor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string) {
    return this.sensors.get(caller, sensorId);
  }

  @Query(() => SensorPageType, { name: 'sensors', description: 'GET /v1/sensors' })
  listSensors(@Caller() caller: CallerContext, @Args('limit', optionalInt) limit?: number | null, @Args('cursor', optionalString) cursor?: string | null) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.sensors.list(caller, query.limit, query.cursor);
  }

  @Query(() => SensorTickPageType, { description: 'GET /v1/sensors/:id/ticks: its evaluations, newest first.' })
  sensorTicks(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) sensorId: string,
    @Args('limit', optionalInt) limit?: number | null,
    @Args('cursor', optionalString) cursor?: string | null,
  ) {
    const query = readQuery(PageQuery, { limit, cursor });
    return this.sensors.ticks(caller, sensorId, query.limit, query.cursor);
  }

  @Mutation(() => SensorType, { description: 'POST /v1/sensors: `input` is the same JSON body.' })
  createSensor(@Caller() caller: CallerContext, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.sensors.create(caller, input);
  }

  @Mutation(() => SensorType, { description: 'PATCH /v1/sensors/:id: the given fields replace the stored ones.' })
  updateSensor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string, @Args('input', { type: () => JsonScalar }) input: JsonValue) {
    return this.sensors.patch(caller, sensorId, input);
  }

  @Mutation(() => Boolean, { description: 'DELETE /v1/sensors/:id: the sensor, its ticks and its run keys; its runs stay. Always true; an unknown id is an error.' })
  async deleteSensor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string) {
    await this.sensors.remove(caller, sensorId);
    return true;
  }

  @Mutation(() => SensorType, { description: 'POST /v1/sensors/:id/pause' })
  pauseSensor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string) {
    return this.sensors.setPaused(caller, sensorId, true);
  }

  @Mutation(() => SensorType, { description: 'POST /v1/sensors/:id/resume: it is evaluated at once.' })
  resumeSensor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string) {
    return this.sensors.setPaused(caller, sensorId, false);
  }

  @Mutation(() => SensorType, { description: 'POST /v1/sensors/:id/cursor: sets the cursor (any JSON, null included) and raises its version.' })
  setSensorCursor(@Caller() caller: CallerContext, @Args('id', { type: id }) sensorId: string, @Args('cursor', optionalJson) cursor?: JsonValue | null) {
    return this.sensors.setCursor(caller, sensorId, cursor === undefined ? {} : { cursor });
  }

  @Mutation(() => SensorType, { description: 'POST /v1/sensors/:id/reset: the cursor (default null) and its version; forgetRunKeys also forgets the run keys.' })
  resetSensor(
    @Caller() caller: CallerContext,
    @Args('id', { type: id }) sensorId: string,
    @Args('cursor', optionalJson) cursor?: JsonValue | null,
    @Args('forgetRunKeys', { type: () => Boolean, nullable: true }) forgetRunKeys?: boolean | null,
  ) {
    return this.sensors.reset(caller, sensorId, { cursor: cursor ?? null, forgetRunKeys: forgetRunKeys ?? false });
  }
}
