import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { dataSourceOptions, openDatabase } from './database.options';

@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // No retries: a database that can't be opened is a configuration error to report now.
          // Entities come from the feature modules imported (TypeOrmModule.forFeature).
          useFactory: () => ({
            ...dataSourceOptions(config),
            entities: [],
            autoLoadEntities: true,
            retryAttempts: 0,
          }),
          dataSourceFactory: (options?: DataSourceOptions) => openDatabase(config, options),
        }),
      ],
    };
  }
}
