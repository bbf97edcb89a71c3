import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DownloadCounters } from '../../storage/download-counters.js';
import { RegistryModule } from '../registry/index.js';
import { ArtifactBuildsService } from './artifact-builds.service.js';
import { ArtifactsController } from './artifacts.controller.js';
import { ArtifactsService } from './artifacts.service.js';
import { ArtifactBuildEntity } from './entities/artifact-build.entity.js';
import { ArtifactVersionEntity } from './entities/artifact-version.entity.js';
import { ArtifactEntity } from './entities/artifact.entity.js';

/** Compiled binary artifacts and their per-platform builds. */
@Module({
  imports: [TypeOrmModule.forFeature([ArtifactEntity, ArtifactVersionEntity, ArtifactBuildEntity]), RegistryModule],
  controllers: [ArtifactsController],
  providers: [ArtifactsService, ArtifactBuildsService],
  exports: [ArtifactsService],
})
export class ArtifactsModule implements OnModuleInit {
  constructor(
    private readonly downloads: DownloadCounters,
    private readonly builds: ArtifactBuildsService,
  ) {}

  onModuleInit(): void {
    // Builds served through signed URLs (object keys under artifacts/) count like direct downloads.
    this.downloads.register('artifacts', (key) => this.builds.countDownload(key));
  }
}
