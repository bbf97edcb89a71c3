import { Injectable } from '@nestjs/common';

type Counter = (key: string) => Promise<boolean>;
/** The current visibility of whatever owns the object (`public`, `unlisted`, `private`), null when unknown. */
type VisibilityOf = (key: string) => Promise<string | null>;

/**
 * Modules that serve files through signed URLs register how a served object is counted
 * (package versions, artifact builds), keyed by the object key's first segment.
 */
@Injectable()
export class DownloadCounters {
  private readonly counters = new Map<string, Counter>();
  private readonly visibilities = new Map<string, VisibilityOf>();

  register(prefix: string, counter: Counter, visibilityOf?: VisibilityOf): void {
    this.counters.set(prefix, counter);
    if (visibilityOf) this.visibilities.set(prefix, visibilityOf);
  }

  /**
   * Whether a URL signed while its owner had `issuedFor` visibility may still be served: one issued for a
   * public or unlisted package stops working as soon as the package turns private.
   */
  async stillServable(key: string, issuedFor: string | undefined): Promise<boolean> {
    const visibilityOf = this.visibilities.get(key.split('/')[0]);
    if (!visibilityOf || issuedFor === undefined || issuedFor === 'private') return true;
    return (await visibilityOf(key)) !== 'private';
  }

  async count(key: string): Promise<void> {
    await this.counters.get(key.split('/')[0])?.(key);
  }
}
