import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions } from './database.options';
import { AppDataSource } from './dialect';

const config = configFromEnvironment('typeorm');

/** Creates the configured PostgreSQL schema when missing, as the service does before migrating. */
class CliDataSource extends AppDataSource {
  override async initialize(): Promise<this> {
    await super.initialize();
    if (config.databaseUrl !== null)
      await this.query(`CREATE SCHEMA IF NOT EXISTS "${config.databaseSchema}"`);
    return this;
  }
}

/**
 * The data source of the TypeORM CLI (`npm run migration:*`): the service's database and
 * schema, configured as the service reads it (`.env` included).
 */
export default new CliDataSource(dataSourceOptions(config));
