import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { ApiErrors } from '../../common/openapi.js';
import { CallerService } from './caller.service.js';
import { PublishersService } from './publishers.service.js';
import { RegisterPublisherDto } from './registry.dto.js';
import { CurrentUserDto, PublisherDto, RegisteredPublisherDto } from './registry.responses.js';
import { currentUserView, publisherView, registeredPublisherView } from './registry.views.js';

@ApiTags('auth')
@Authenticated()
@Controller('api/v1/auth')
export class AuthController {
  constructor(
    private readonly callers: CallerService,
    private readonly publishers: PublishersService,
  ) {}

  @Get('me')
  @ApiOperation({ summary: 'Current user (created at the first authenticated request)' })
  @ApiOkResponse({ type: CurrentUserDto })
  async me(@Req() request: AuthenticatedRequest) {
    const caller = await this.callers.of(request);
    const user = caller.user!;
    const publisher = caller.publisherId ? await this.publishers.findById(caller.publisherId) : null;
    return currentUserView(user, caller, publisher);
  }

  @Get('publisher')
  @ApiOperation({ summary: "The caller's own publisher" })
  @ApiOkResponse({ type: PublisherDto })
  @ApiErrors({ 404: 'The user has no publisher' })
  async publisher(@Req() request: AuthenticatedRequest) {
    const caller = await this.callers.of(request);
    const publisher = caller.publisherId ? await this.publishers.findById(caller.publisherId) : null;
    if (!publisher) throw new PlatformError('NOT_FOUND', 'You have no publisher; register one with POST /api/v1/auth/register-publisher');
    const stats = (await this.publishers.stats([publisher.id], caller)).get(publisher.id);
    return publisherView(publisher, stats);
  }

  @Post('register-publisher')
  @HttpCode(201)
  @ApiOperation({ summary: 'Register the caller as a publisher' })
  @ApiCreatedResponse({ type: RegisteredPublisherDto, description: 'Publisher created with verification_status "unverified"' })
  @ApiErrors({ 409: 'Name taken (case-insensitively) or the user already has a publisher', 422: 'Invalid name, e-mail or homepage' })
  async registerPublisher(@Req() request: AuthenticatedRequest, @Body() body: RegisterPublisherDto) {
    const caller = await this.callers.of(request);
    const publisher = await this.publishers.register(caller.user!.id, {
      name: body.name,
      displayName: body.display_name,
      email: body.email,
      homepage: body.homepage,
    });
    return registeredPublisherView(publisher);
  }
}
