import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** For feature modules (listed as classes); the app's own modules are handed it by `forRoot`. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
