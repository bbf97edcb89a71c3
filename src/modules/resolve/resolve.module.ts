import { Module } from '@nestjs/common';
import { RegistryModule } from '../registry/index.js';
import { ResolveController } from './resolve.controller.js';
import { ResolveService } from './resolve.service.js';

/** Dependency resolution and compatibility checks over the registry's visible versions. */
@Module({
  imports: [RegistryModule],
  controllers: [ResolveController],
  providers: [ResolveService],
  exports: [ResolveService],
})
export class ResolveModule {}
