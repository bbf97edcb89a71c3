import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import type { RequirementInput } from '../../packaging/requirement.js';
import type { Caller } from '../registry/index.js';
import { ApiErrors } from '../../common/openapi.js';
import { CheckCompatibilityDto, ResolveRequestDto } from './resolve.dto.js';
import { CompatibilityDto, ResolutionDto } from './resolve.responses.js';
import { ResolveService } from './resolve.service.js';
import { compatibilityView, resolutionView } from './resolve.views.js';

@ApiTags('resolve')
@Controller('api/v1/resolve')
export class ResolveController {
  constructor(private readonly resolver: ResolveService) {}

  @Post()
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resolve dependencies',
    description:
      'Either `requirements` (strings such as "CloudM>=2.0.0", "lib^1.2", "x==1.0.0", "y", "z>=1.0,<2.0") or `packages` ([{name, version}]), with an optional `toolbox_version`. ' +
      'Picks one version per package, transitive dependencies included, backtracking on conflicts. Candidates: versions of packages the caller may read, not yanked ' +
      '(an exact pin may pick a yanked one, with a warning), prereleases only when a range names one, and only versions supporting toolbox_version. A token is optional; it widens what is visible. ' +
      'success=false is still 200, with `conflicts` (repeated as `errors`) naming the chain that caused each.',
  })
  @ApiBody({ type: ResolveRequestDto })
  @ApiOkResponse({ type: ResolutionDto })
  @ApiErrors({
    400: 'A malformed requirement or toolbox_version (named in the message), or no requirement at all',
    422: 'Body fields of the wrong type',
  })
  async resolve(@CurrentCaller() caller: Caller, @RequestBaseUrl() baseUrl: string, @Body() body: ResolveRequestDto) {
    const inputs: RequirementInput[] = [
      ...(body.requirements ?? []),
      ...(body.packages ?? []).map((item) => ({ name: item.name, version: item.version })),
    ];
    return resolutionView(await this.resolver.resolve(caller, inputs, body.toolbox_version, baseUrl));
  }

  @Get('check')
  @Public()
  @ApiOperation({
    summary: 'Check compatibility',
    description:
      'Whether a package version (default: latest), with its dependencies, installs on a host (ToolBox) version.',
  })
  @ApiOkResponse({ type: CompatibilityDto })
  @ApiErrors({
    400: 'Missing package, or a malformed toolbox_version',
    404: 'Unknown or invisible package, or unknown version',
  })
  async checkByQuery(@CurrentCaller() caller: Caller, @Query() query: CheckCompatibilityDto) {
    return this.check(caller, query);
  }

  @Post('check')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Check compatibility (JSON body)',
    description: 'The same check as GET /api/v1/resolve/check.',
  })
  @ApiBody({ type: CheckCompatibilityDto })
  @ApiOkResponse({ type: CompatibilityDto })
  @ApiErrors({
    400: 'A malformed toolbox_version',
    404: 'Unknown or invisible package, or unknown version',
    422: 'Body fields of the wrong type',
  })
  async checkByBody(@CurrentCaller() caller: Caller, @Body() body: CheckCompatibilityDto) {
    return this.check(caller, body);
  }

  private async check(caller: Caller, input: CheckCompatibilityDto) {
    return compatibilityView(
      await this.resolver.check(caller, {
        packageName: input.package,
        version: input.version,
        toolboxVersion: input.toolbox_version,
      }),
    );
  }
}
