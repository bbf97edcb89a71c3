import { Injectable, Logger } from '@nestjs/common';

export interface VersionUploadedEvent {
  packageId: string;
  packageName: string;
  version: string;
}

export interface VersionRemovedEvent {
  packageId: string;
  version: string;
}

export interface PackageDeletedEvent {
  packageId: string;
  packageName: string;
  actorUserId: string | null;
}

export interface PackageChangedEvent {
  packageId: string;
}

/** A publisher's verification status changed (its packages' verified flag with it). */
export interface PublisherChangedEvent {
  publisherId: string;
  verified: boolean;
}

/** A served file was counted; `totalDownloads` is the package's count right after it. */
export interface DownloadCountedEvent {
  packageId: string;
  totalDownloads: number;
}

type Listener<T> = (event: T) => Promise<void> | void;

/**
 * What the registry announces to the modules built on it (search index, delta pre-generation, audit).
 * Listeners run after the change is committed; a failing listener is logged and never undoes it.
 */
@Injectable()
export class RegistryEvents {
  private readonly logger = new Logger('RegistryEvents');
  private readonly listeners = {
    versionUploaded: [] as Listener<VersionUploadedEvent>[],
    versionRemoved: [] as Listener<VersionRemovedEvent>[],
    packageDeleted: [] as Listener<PackageDeletedEvent>[],
    packageChanged: [] as Listener<PackageChangedEvent>[],
    downloadCounted: [] as Listener<DownloadCountedEvent>[],
    publisherChanged: [] as Listener<PublisherChangedEvent>[],
  };

  onVersionUploaded(listener: Listener<VersionUploadedEvent>): void {
    this.listeners.versionUploaded.push(listener);
  }

  onVersionRemoved(listener: Listener<VersionRemovedEvent>): void {
    this.listeners.versionRemoved.push(listener);
  }

  onPackageDeleted(listener: Listener<PackageDeletedEvent>): void {
    this.listeners.packageDeleted.push(listener);
  }

  onPackageChanged(listener: Listener<PackageChangedEvent>): void {
    this.listeners.packageChanged.push(listener);
  }

  onDownloadCounted(listener: Listener<DownloadCountedEvent>): void {
    this.listeners.downloadCounted.push(listener);
  }

  onPublisherChanged(listener: Listener<PublisherChangedEvent>): void {
    this.listeners.publisherChanged.push(listener);
  }

  hasListeners(name: keyof RegistryEvents['listeners']): boolean {
    return this.listeners[name].length > 0;
  }

  async emit<K extends keyof RegistryEvents['listeners']>(
    name: K,
    event: Parameters<RegistryEvents['listeners'][K][number]>[0],
  ): Promise<void> {
    for (const listener of this.listeners[name] as Listener<typeof event>[]) {
      try {
        await listener(event);
      } catch (error) {
        this.logger.error(`Listener for ${name} failed: ${(error as Error).stack ?? error}`);
      }
    }
  }
}
