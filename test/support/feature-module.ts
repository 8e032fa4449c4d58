import { Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { loadConfig } from '../../src/config/app-config';
import { DatabaseModule } from '../../src/database/database.module';
import { SCHEMAS } from '../../src/features';

/**
 * A feature module wired by Nest as the app wires it (its own imports resolve its dependencies),
 * on the service's database with every migration run: SQLite in memory unless `env` says
 * otherwise. A module that gains a dependency needs no change here or in its spec.
 */
export function featureTestingModule(
  feature: Type,
  env: Record<string, string> = { DATABASE_PATH: ':memory:' },
): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [DatabaseModule.forRoot(loadConfig(env).database, SCHEMAS), feature],
  }).compile();
}
