import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegistryModule } from '../registry/index.js';
import { DeltaGenerator } from './delta-generator.js';
import { DiffController } from './diff.controller.js';
import { DiffService } from './diff.service.js';
import { PackageDeltaEntity } from './entities/package-delta.entity.js';

/** Incremental updates between package versions. */
@Module({
  imports: [TypeOrmModule.forFeature([PackageDeltaEntity]), RegistryModule],
  controllers: [DiffController],
  providers: [DiffService, DeltaGenerator],
  exports: [DiffService],
})
export class DiffModule {}
