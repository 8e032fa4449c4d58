import { DataSource, DataSourceOptions } from 'typeorm';

/**
 * Runs `use` on a fresh in-memory SQLite database whose tables are made from these entities
 * (synchronised, no migrations), and destroys it afterwards, also when `use` fails: for specs of
 * the database helpers on entities other than the service's own.
 */
export async function withEntitiesDatabase<T>(
  options: Pick<DataSourceOptions, 'entities' | 'subscribers'>,
  use: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const dataSource = new DataSource({ type: 'sqlite', database: ':memory:', synchronize: true, ...options });
  await dataSource.initialize();
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
