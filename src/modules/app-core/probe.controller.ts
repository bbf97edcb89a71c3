import { Controller, Get, Req } from '@nestjs/common';
import { Public } from '../../auth/access.decorators.js';
import { isLocalAddress, normaliseAddress } from './local-address.js';

/** The answer of `GET /api/geo`. */
export interface GeoAnswer {
  ip: string;
  local: boolean;
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  timezone: string | null;
  error?: string;
}

/**
 * Probe answer for a caller's address: loopback and private addresses are local (no lookup happens);
 * a public address carries `error`, because this platform ships no geolocation database and makes no
 * outside lookup.
 */
export function geoAnswerFor(address: string): GeoAnswer {
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
  if (!local) answer.error = 'geolocation unavailable';
  return answer;
}

/** The network probe endpoints the app uses to find and measure a platform server (seed 03 C). */
@Controller('api')
export class ProbeController {
  /** Reachability: status 200 with `{status: "pong", timestamp}`. */
  @Public()
  @Get('ping')
  ping(): { status: 'pong'; timestamp: string } {
    return { status: 'pong', timestamp: new Date().toISOString() };
  }

  /** The caller's address and what is known of its location. */
  @Public()
  @Get('geo')
  geo(@Req() request: { ip?: string; socket?: { remoteAddress?: string } }): GeoAnswer {
    return geoAnswerFor(request.ip ?? request.socket?.remoteAddress ?? '');
  }
}
