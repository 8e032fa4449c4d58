import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/** Up when every migration the app ships has been applied to the database. */
@Injectable()
export class MigrationsHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly indicator: HealthIndicatorService,
  ) {}

  async isApplied(key: string): Promise<HealthIndicatorResult> {
    const check = this.indicator.check(key);
    let pending: boolean;
    try {
      pending = await this.dataSource.showMigrations();
    } catch {
      return check.down({ message: 'cannot read the applied migrations' });
    }
    return pending ? check.down({ message: 'migrations are pending' }) : check.up();
  }
}
