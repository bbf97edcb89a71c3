import { QueueJobEntity } from '../queue/queue-job.entity.js';
import { PackageVersionEntity } from '../modules/registry/entities/package-version.entity.js';
import { PackageEntity } from '../modules/registry/entities/package.entity.js';
import { PublisherEntity } from '../modules/registry/entities/publisher.entity.js';
import { UserEntity } from '../modules/registry/entities/user.entity.js';

/** Every entity of the platform, for the one data source (modules still own and export services, not these). */
export const ENTITIES = [QueueJobEntity, UserEntity, PublisherEntity, PackageEntity, PackageVersionEntity];
