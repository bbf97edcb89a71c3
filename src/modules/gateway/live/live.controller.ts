import { Body, Controller, Delete, Get, Param, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated } from '../../../auth/access.decorators.js';
import { CurrentCaller } from '../../../auth/current-caller.decorator.js';
import { requestOrigin } from '../../../common/request-base-url.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { ClosedLiveSessionDto, CreateLiveSessionDto, LiveSessionDto, LiveSessionInfoDto } from './live.dto.js';
import { LiveSessionsService } from './live-sessions.service.js';
import { LiveVoiceSocket } from './live-voice.socket.js';

/** Live voice sessions: create → open; the socket streams; DELETE closes. */
@ApiTags('openai')
@ApiBearerAuth()
@Authenticated()
@Controller('v1/audio/live')
export class LiveController {
  constructor(
    private readonly sessions: LiveSessionsService,
    private readonly socket: LiveVoiceSocket,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Open a live voice session: a token for WS /v1/audio/live/ws/{token}, valid 5–20 minutes' })
  @ApiBody({ type: CreateLiveSessionDto })
  @ApiCreatedResponse({ type: LiveSessionDto })
  async create(
    @CurrentCaller() caller: GatewayCaller,
    @Body() body: unknown,
    @Req() request: Request,
  ): Promise<LiveSessionDto> {
    const { token, expiresAt } = await this.sessions.create(caller, body);
    const origin = requestOrigin(request).replace(/^http/, 'ws');
    return { token, websocket_url: `${origin}/v1/audio/live/ws/${token}`, expires_at: expiresAt.toISOString() };
  }

  @Get(':token')
  @ApiOperation({ summary: 'The session: expiry, configuration, turns so far' })
  @ApiOkResponse({ type: LiveSessionInfoDto })
  async get(@CurrentCaller() caller: GatewayCaller, @Param('token') token: string): Promise<LiveSessionInfoDto> {
    const session = await this.sessions.get(caller, token);
    return {
      token,
      created_at: session.createdAt.toISOString(),
      expires_at: session.expiresAt.toISOString(),
      history_length: session.history.length,
      config: session.config as unknown as Record<string, unknown>,
    };
  }

  @Delete(':token')
  @ApiOperation({ summary: 'Close the session (an open socket is closed with 1000)' })
  @ApiOkResponse({ type: ClosedLiveSessionDto })
  async close(@CurrentCaller() caller: GatewayCaller, @Param('token') token: string): Promise<ClosedLiveSessionDto> {
    await this.sessions.close(caller, token);
    this.socket.disconnect(token);
    return { status: 'closed', token };
  }
}
