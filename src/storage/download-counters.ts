import { Injectable } from '@nestjs/common';

type Counter = (key: string) => Promise<boolean>;

/**
 * Modules that serve files through signed URLs register how a served object is counted
 * (package versions, artifact builds), keyed by the object key's first segment.
 */
@Injectable()
export class DownloadCounters {
  private readonly counters = new Map<string, Counter>();

  register(prefix: string, counter: Counter): void {
    this.counters.set(prefix, counter);
  }

  async count(key: string): Promise<void> {
    await this.counters.get(key.split('/')[0])?.(key);
  }
}
