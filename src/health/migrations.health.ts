import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

@Injectable()
export class MigrationsHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly indicator: HealthIndicatorService,
  ) {}

  async isApplied(key: string, timeoutMs = 1000): Promise<HealthIndicatorResult> {
    const check = this.indicator.check(key);
    let pending: boolean;
    let timer: NodeJS.Timeout | undefined;
    try {
      pending = await Promise.race([
        this.dataSource.showMigrations(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        }),
      ]);
    } catch {
      return check.down({ message: 'cannot read the applied migrations' });
    } finally {
      clearTimeout(timer);
    }
    return pending ? check.down({ message: 'migrations are pending' }) : check.up();
  }
}
