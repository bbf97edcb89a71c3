import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { PlatformError } from '../../common/errors.js';
import type { Caller } from './caller.js';
import { ApiErrors } from '../../common/openapi.js';
import { PublishersService } from './publishers.service.js';
import { RegisterPublisherDto } from './registry.dto.js';
import { CurrentUserDto, PublisherDto, RegisteredPublisherDto } from './registry.responses.js';
import { currentUserView, publisherView, registeredPublisherView } from './registry.views.js';

/** The registry's own account routes under /api/v1/auth (not the platform's sign-in, which issues the tokens). */
@ApiTags('auth')
@Authenticated()
@Controller('api/v1/auth')
export class RegistryAuthController {
  constructor(private readonly publishers: PublishersService) {}

  @Get('me')
  @ApiOperation({ summary: 'Current user (created at the first authenticated request)' })
  @ApiOkResponse({ type: CurrentUserDto })
  async me(@CurrentCaller() caller: Caller) {
    const user = caller.user!;
    const publisher = caller.publisherId ? await this.publishers.findById(caller.publisherId) : null;
    return currentUserView(user, caller, publisher);
  }

  @Get('publisher')
  @ApiOperation({ summary: "The caller's own publisher" })
  @ApiOkResponse({ type: PublisherDto })
  @ApiErrors({ 404: 'The user has no publisher' })
  async publisher(@CurrentCaller() caller: Caller) {
    const publisher = caller.publisherId ? await this.publishers.findById(caller.publisherId) : null;
    if (!publisher)
      throw new PlatformError(
        'NOT_FOUND',
        'You have no publisher; register one with POST /api/v1/auth/register-publisher',
      );
    const stats = (await this.publishers.stats([publisher.id], caller)).get(publisher.id);
    return publisherView(publisher, stats);
  }

  @Post('register-publisher')
  @HttpCode(201)
  @ApiOperation({ summary: 'Register the caller as a publisher' })
  @ApiCreatedResponse({
    type: RegisteredPublisherDto,
    description: 'Publisher created with verification_status "unverified"',
  })
  @ApiErrors({
    409: 'Name taken (case-insensitively) or the user already has a publisher',
    422: 'Invalid name, e-mail or homepage',
  })
  async registerPublisher(@CurrentCaller() caller: Caller, @Body() body: RegisterPublisherDto) {
    const publisher = await this.publishers.register(caller.user!.id, {
      name: body.name,
      displayName: body.display_name,
      email: body.email,
      homepage: body.homepage,
    });
    return registeredPublisherView(publisher);
  }
}
