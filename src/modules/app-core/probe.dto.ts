import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The answer of `GET /api/ping`. */
export class PingDto {
  @ApiProperty({ type: String, enum: ['pong'] })
  status!: 'pong';

  @ApiProperty({ type: String, format: 'date-time' })
  timestamp!: string;
}

/** The answer of `GET /api/geo`: the caller's address and what the offline database knows of it. */
export class GeoAnswerDto {
  @ApiProperty({
    type: String,
    example: '81.2.69.160',
    description: 'The caller as seen by the server (IPv4-mapped IPv6 unwrapped)',
  })
  ip!: string;

  @ApiProperty({ type: Boolean, description: 'Loopback or private address: no lookup happens' })
  local!: boolean;

  @ApiProperty({ type: String, nullable: true, example: 'GB', description: 'ISO 3166-1 alpha-2 country code' })
  country!: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'England' })
  region!: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'London' })
  city!: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 51.5 })
  latitude!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: -0.12 })
  longitude!: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'Europe/London' })
  timezone!: string | null;

  @ApiPropertyOptional({ type: String, description: 'Credit for the data a public address was located with' })
  attribution?: string;

  @ApiPropertyOptional({
    type: String,
    example: 'geolocation unavailable',
    description: 'Set when the database is not installed or does not know the address',
  })
  error?: string;
}
