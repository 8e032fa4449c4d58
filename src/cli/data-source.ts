import { configFromEnvironment } from '../config/environment';
import { dataSourceOptions } from '../database/database.options';
import { AppDataSource } from '../database/dialect';
import { SCHEMAS } from '../features';

const { database } = configFromEnvironment('typeorm');

/** Creates the configured PostgreSQL schema when missing, as the service does before migrating. */
class CliDataSource extends AppDataSource {
  override async initialize(): Promise<this> {
    await super.initialize();
    if (database.url !== null) await this.query(`CREATE SCHEMA IF NOT EXISTS "${database.schema}"`);
    return this;
  }
}

/** The TypeORM CLI's data source (`npm run migration:*`): the service's database, `.env` included. */
export default new CliDataSource(dataSourceOptions(database, SCHEMAS));
