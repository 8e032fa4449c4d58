import { Global, Injectable, Module } from '@nestjs/common';

/** Whether this instance is draining for shutdown: readiness turns 503 at once, so proxies stop sending. */
@Injectable()
export class Lifecycle {
  draining = false;
}

@Global()
@Module({ providers: [Lifecycle], exports: [Lifecycle] })
export class LifecycleModule {}
