import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import type { RequirementInput } from '../../packaging/requirement.js';
import type { Caller } from '../registry/caller.js';
import { CheckCompatibilityDto, ResolveRequestDto } from './resolve.dto.js';
import { ResolveService } from './resolve.service.js';
import { compatibilityView, resolutionView } from './resolve.views.js';

const RESOLUTION_EXAMPLE = {
  success: true,
  resolved: {
    CloudM: {
      name: 'CloudM',
      version: '2.1.0',
      download_url: 'http://localhost:4025/api/v1/files/packages/…/2.1.0-3b1e9a0c4d2f.zip?expires=…&signature=…',
      checksum: '3b1e9a0c4d2f…',
      checksum_sha256: '3b1e9a0c4d2f…',
      dependencies: ['lib^1.2'],
    },
  },
  conflicts: [],
  warnings: [],
  errors: [],
};

const CHECK_EXAMPLE = {
  compatible: false,
  reason: 'CloudM 2.1.0 requires toolbox >=2.0.0, not 1.5.0',
  package: 'CloudM',
  version: '2.1.0',
  toolbox_version: '1.5.0',
  requires_toolbox: '>=2.0.0',
  dependencies: {},
  warnings: [],
  conflicts: ['CloudM 2.1.0 requires toolbox >=2.0.0, not 1.5.0'],
};

@ApiTags('resolve')
@Controller('api/v1/resolve')
export class ResolveController {
  constructor(
    private readonly resolver: ResolveService,
  ) {}

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
  @ApiOkResponse({ schema: { example: RESOLUTION_EXAMPLE } })
  @ApiBadRequestResponse({ description: 'A malformed requirement or toolbox_version (named in the message), or no requirement at all' })
  @ApiUnprocessableEntityResponse({ description: 'Body fields of the wrong type' })
  async resolve(@CurrentCaller() caller: Caller, @RequestBaseUrl() baseUrl: string, @Body() body: ResolveRequestDto) {
    const inputs: RequirementInput[] = [...(body.requirements ?? []), ...(body.packages ?? []).map((item) => ({ name: item.name, version: item.version }))];
    return resolutionView(await this.resolver.resolve(caller, inputs, body.toolbox_version, baseUrl));
  }

  @Get('check')
  @Public()
  @ApiOperation({ summary: 'Check compatibility', description: 'Whether a package version (default: latest), with its dependencies, installs on a host (ToolBox) version.' })
  @ApiOkResponse({ schema: { example: CHECK_EXAMPLE } })
  @ApiBadRequestResponse({ description: 'Missing package, or a malformed toolbox_version' })
  @ApiNotFoundResponse({ description: 'Unknown or invisible package, or unknown version' })
  async checkByQuery(@CurrentCaller() caller: Caller, @Query() query: CheckCompatibilityDto) {
    return this.check(caller, query);
  }

  @Post('check')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Check compatibility (JSON body)', description: 'The same check as GET /api/v1/resolve/check.' })
  @ApiBody({ type: CheckCompatibilityDto })
  @ApiOkResponse({ schema: { example: CHECK_EXAMPLE } })
  @ApiBadRequestResponse({ description: 'A malformed toolbox_version' })
  @ApiNotFoundResponse({ description: 'Unknown or invisible package, or unknown version' })
  async checkByBody(@CurrentCaller() caller: Caller, @Body() body: CheckCompatibilityDto) {
    return this.check(caller, body);
  }

  private async check(caller: Caller, input: CheckCompatibilityDto) {
    return compatibilityView(await this.resolver.check(caller, { packageName: input.package, version: input.version, toolboxVersion: input.toolbox_version }));
  }
}
