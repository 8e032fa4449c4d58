import { Type } from '@nestjs/common';
import { AUDIT_SCHEMA } from './audit/audit.schema';
import { AUTH_SCHEMA } from './auth/auth.schema';
import { EVENTS_SCHEMA } from './events/events.schema';
import { ModuleSchema } from './database/module-schema';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { IDEMPOTENCY_SCHEMA } from './idempotency/idempotency.schema';
import { PetsModule } from './pets/pets.module';
import { PETS_SCHEMA } from './pets/pets.schema';

export interface Feature {
  readonly module: Type;
  readonly schema?: ModuleSchema;
}

/** Every feature module: the one list a new module is added to (the generator adds its line). */
export const FEATURES: readonly Feature[] = [
  { module: IdempotencyModule, schema: IDEMPOTENCY_SCHEMA },
  { module: HealthModule },
  { module: PetsModule, schema: PETS_SCHEMA },
  // generate:module adds new features above this line
];

export const SCHEMAS: readonly ModuleSchema[] = [
  AUTH_SCHEMA,
  AUDIT_SCHEMA,
  EVENTS_SCHEMA,
  ...FEATURES.flatMap((feature) => (feature.schema ? [feature.schema] : [])),
];
