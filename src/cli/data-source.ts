import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions } from '../database/database.options';
import { AppDataSource } from '../database/dialect';
import { SCHEMAS } from '../features';

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

/** The TypeORM CLI's data source (`npm run migration:*`): the service's database, `.env` included. */
export default new CliDataSource(dataSourceOptions(config, SCHEMAS));
