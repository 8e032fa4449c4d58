import * as sqlite3 from 'sqlite3';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { SCHEMAS } from '../features';
import { dataSourceOptions, SQLITE3_DRIVER } from './database.options';

/** The app's options on a throwaway database, without TypeORM logging the expected failure. */
const options = () => ({
  ...dataSourceOptions(loadConfig({ DATABASE_PATH: ':memory:' }).database, SCHEMAS),
  logging: false,
});

describe('dataSourceOptions', () => {
  it('gives TypeORM the sqlite3 driver without the per-query stack traces of verbose mode', async () => {
    const methods = ['run', 'all', 'get', 'prepare', 'exec'] as const;
    const before = methods.map((method) => sqlite3.Database.prototype[method]);
    const dataSource = new DataSource(options());

    await dataSource.initialize();
    try {
      await expect(dataSource.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
      expect(methods.map((method) => sqlite3.Database.prototype[method])).toEqual(before);
      expect(SQLITE3_DRIVER.Database).toBe(sqlite3.Database);
      expect(SQLITE3_DRIVER.verbose()).toBe(SQLITE3_DRIVER);
    } finally {
      await dataSource.destroy();
    }
  });

  it('still reports a failed query with its SQLite error', async () => {
    const dataSource = new DataSource(options());

    await dataSource.initialize();
    try {
      await expect(dataSource.query('SELECT * FROM no_such_table')).rejects.toThrow(
        'SQLITE_ERROR: no such table: no_such_table',
      );
    } finally {
      await dataSource.destroy();
    }
  });
});
