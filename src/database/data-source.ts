import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { dataSourceOptions } from './database.options';

/** The data source the TypeORM CLI uses (`npm run migration:*`), configured like the app. */
export default new DataSource(dataSourceOptions(loadConfig(process.env)));
