import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AUDIT_LOG } from '../common/audit-context';
import { AuditConfig } from '../config/app-config';
import { AuditController } from './audit.controller';
import { AUDIT_SCHEMA } from './audit.schema';
import { AUDIT_OPTIONS, AuditService } from './audit.service';

/** Global: every store and the key service write their changes' events through AUDIT_LOG. */
@Global()
@Module({})
export class AuditModule {
  /** Without `routes` in a worker: it writes audit events and answers no request. */
  static forRoot(options: AuditConfig, routes = true): DynamicModule {
    return {
      module: AuditModule,
      imports: [TypeOrmModule.forFeature([...AUDIT_SCHEMA.entities])],
      controllers: routes ? [AuditController] : [],
      providers: [
        { provide: AUDIT_OPTIONS, useValue: options },
        AuditService,
        { provide: AUDIT_LOG, useExisting: AuditService },
      ],
      exports: [AUDIT_LOG],
    };
  }
}
