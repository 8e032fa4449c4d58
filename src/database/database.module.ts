import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG, InjectConfig } from '../config/config.module';
import { applyDurability, dataSourceOptions } from './database.options';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      // No retries: a database that can't be opened is a configuration error to report now.
      useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config), retryAttempts: 0 }),
    }),
  ],
})
export class DatabaseModule implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await applyDurability(this.dataSource, this.config);
  }
}
