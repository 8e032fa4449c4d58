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
  static forRoot(options: AuditConfig): DynamicModule {
    return {
      module: AuditModule,
      imports: [TypeOrmModule.forFeature([...AUDIT_SCHEMA.entities])],
      controllers: [AuditController],
      providers: [
        { provide: AUDIT_OPTIONS, useValue: options },
        AuditService,
        { provide: AUDIT_LOG, useExisting: AuditService },
      ],
      exports: [AUDIT_LOG],
    };
  }
}
