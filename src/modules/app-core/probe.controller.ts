import { Controller, Get, Optional, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { GeoDatabase } from './geo-database.js';
import { isLocalAddress, normaliseAddress } from './local-address.js';
import { GeoAnswerDto, PingDto } from './probe.dto.js';

/** The answer of `GET /api/geo` (attribution: credit for the data a public address was located with). */
export type GeoAnswer = GeoAnswerDto;

/**
 * Probe answer for a caller's address: loopback and private addresses are local (no lookup happens);
 * a public address is located in the offline database (geo-database.ts), and carries `error` only when
 * the database is not installed or does not know the address. No outside lookup ever happens.
 */
export async function geoAnswerFor(address: string, database?: GeoDatabase): Promise<GeoAnswer> {
  const ip = normaliseAddress(address);
  const local = isLocalAddress(ip);
  const answer: GeoAnswer = {
    ip,
    local,
    country: null,
    region: null,
    city: null,
    latitude: null,
    longitude: null,
    timezone: null,
  };
  if (local) return answer;
  const place = database ? await database.lookup(ip) : null;
  if (!place) return { ...answer, error: 'geolocation unavailable' };
  return { ...answer, ...place, attribution: database!.attribution };
}

/** The network probe endpoints the app uses to find and measure a platform server. */
@ApiTags('probe')
@Controller('api')
export class ProbeController {
  private readonly database: GeoDatabase;

  constructor(@Optional() database?: GeoDatabase) {
    this.database = database ?? new GeoDatabase();
  }

  /** Reachability: status 200 with `{status: "pong", timestamp}`. */
  @Public()
  @Get('ping')
  @ApiOperation({ summary: 'Reachability probe' })
  @ApiOkResponse({ type: PingDto })
  ping(): PingDto {
    return { status: 'pong', timestamp: new Date().toISOString() };
  }

  /** The caller's address and what is known of its location. */
  @Public()
  @Get('geo')
  @ApiOperation({ summary: "The caller's address and its location from the offline DB-IP Lite database" })
  @ApiOkResponse({ type: GeoAnswerDto })
  geo(@Req() request: { ip?: string; socket?: { remoteAddress?: string } }): Promise<GeoAnswer> {
    return geoAnswerFor(request.ip ?? request.socket?.remoteAddress ?? '', this.database);
  }
}
