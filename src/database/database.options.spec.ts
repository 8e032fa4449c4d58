import { existsSync } from 'node:fs';
import { openMigratedDatabase } from '../../test/support/database';

describe('openDatabase', () => {
  it('opens SQLite through better-sqlite3 in WAL mode; :memory: is a file of its own, gone once closed', async () => {
    const dataSource = await openMigratedDatabase();
    const file = String(dataSource.options.database);
    try {
      expect(dataSource.options.type).toBe('better-sqlite3');
      expect(file).toMatch(/petstore-memory-.+\/petstore\.sqlite$/);
      await expect(dataSource.query('PRAGMA journal_mode')).resolves.toEqual([{ journal_mode: 'wal' }]);
    } finally {
      await dataSource.destroy();
    }
    expect(existsSync(file)).toBe(false);
  });

  it('still reports a failed query with its SQLite error', async () => {
    const dataSource = await openMigratedDatabase();
    try {
      await expect(dataSource.query('SELECT * FROM no_such_table')).rejects.toMatchObject({
        message: 'no such table: no_such_table',
      });
    } finally {
      await dataSource.destroy();
    }
  });
});
