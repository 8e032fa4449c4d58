import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSourceOptions } from 'typeorm';
import { ERROR_TRANSLATOR } from '../common/errors/api-exception';
import { DatabaseConfig } from '../config/app-config';
import { ModuleSchema } from './module-schema';
import { dataSourceOptions, openDatabase } from './database.options';
import { ChangeNotices } from './change-notices';
import { translateOutage } from './outage';
import { DATABASE_CONFIG, ResourceStores } from './resource-store';
import { Transactions } from './transactions';

/** The database of the modules' schemas, the stores and transactions they use, and the 503 of an outage. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(database: DatabaseConfig, schemas: readonly ModuleSchema[]): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // No retries: a database that cannot be opened is a configuration error to report now.
          useFactory: () => ({
            ...dataSourceOptions(database, schemas),
            entities: [],
            autoLoadEntities: true,
            retryAttempts: 0,
          }),
          dataSourceFactory: (options?: DataSourceOptions) =>
            openDatabase(database, options ?? dataSourceOptions(database, schemas)),
        }),
      ],
      providers: [
        { provide: DATABASE_CONFIG, useValue: database },
        ResourceStores,
        Transactions,
        ChangeNotices,
        { provide: ERROR_TRANSLATOR, useFactory: translateOutage },
      ],
      exports: [ResourceStores, Transactions, ERROR_TRANSLATOR],
    };
  }
}
