import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PlatformError } from '../../common/errors.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { ApiErrors } from '../../common/openapi.js';
import { validateAs } from '../../common/validation.pipe.js';
import { INFRASTRUCTURE_CONFIG, REGISTRY_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig, RegistryConfig } from '../../config/config.js';
import type { Caller } from './caller.js';
import { CallerService } from './caller.service.js';
import { PackageVersionsService } from './package-versions.service.js';
import { PackageViewCache } from './package-view-cache.js';
import { PackagesService, type PackageInput } from './packages.service.js';
import { CreatePackageDto, ListPackagesQuery, UpdatePackageDto } from './registry.dto.js';
import { PackageDetailDto, PackageListDto } from './registry.responses.js';
import { packageDetail, packageListView } from './registry.views.js';

export function packageInputOf(dto: CreatePackageDto): PackageInput {
  return {
    name: dto.name,
    displayName: dto.display_name,
    description: dto.description,
    packageType: dto.package_type,
    visibility: dto.visibility,
    homepage: dto.homepage,
    repository: dto.repository,
    license: dto.license,
    keywords: dto.keywords,
    readme: dto.readme,
  };
}

@ApiTags('packages')
@ApiExtraModels(CreatePackageDto)
@Controller('api/v1/packages')
export class PackagesController {
  constructor(
    private readonly packages: PackagesService,
    private readonly versions: PackageVersionsService,
    private readonly viewCache: PackageViewCache,
    private readonly callers: CallerService,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'List packages the caller may see, most recently updated first' })
  @ApiOkResponse({ type: PackageListDto })
  @ApiErrors({ 400: 'Invalid page, per_page or package_type' })
  async list(@CurrentCaller() caller: Caller, @Query() query: ListPackagesQuery) {
    const { items, total } = await this.packages.list(caller, {
      page: query.page,
      perPage: query.per_page,
      packageType: query.package_type,
      publisher: query.publisher,
    });
    return packageListView(items, total, query.page, query.per_page);
  }

  @Post()
  @Authenticated()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a package (JSON, or multipart with a `metadata` JSON field and an optional first-version `file`)',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({
    schema: {
      oneOf: [
        { $ref: getSchemaPath(CreatePackageDto) },
        {
          type: 'object',
          required: ['metadata'],
          properties: {
            metadata: { type: 'string', description: 'CreatePackageDto as JSON, plus version/changelog' },
            file: { type: 'string', format: 'binary' },
          },
        },
      ],
    },
  })
  @ApiCreatedResponse({ type: PackageDetailDto, description: 'The package view' })
  @ApiErrors({
    403: 'The caller has no publisher, or it is suspended',
    409: 'The name is taken (case-insensitively)',
    400: 'A malformed multipart body: a second file part, a file part not named file, a field sent twice, too many parts',
    413: 'Over UPLOAD_MAX_BYTES, a text field over 1 MiB, or text fields together over 2 MiB',
    422: 'Invalid metadata, or a rejected archive',
  })
  async create(@Req() request: Request & AuthenticatedRequest, @CurrentCaller() caller: Caller) {
    if (/^multipart\/form-data/i.test(request.headers['content-type'] ?? '')) {
      try {
        // No publisher (or a suspended one): refused before a byte is staged.
        await this.packages.publishingPublisher(caller);
      } catch (error) {
        request.resume();
        throw error;
      }
      const body = await readMultipart(request, {
        fileField: 'file',
        maxFileBytes: this.registry.uploadMaxBytes,
        tempRoot: uploadTempRoot(this.infrastructure),
        // Metadata sent before the file (as clients do) is validated, and the name checked, before a byte is staged.
        beforeFile: async (fields) => {
          if (fields.metadata === undefined) return;
          await this.packages.prepareCreate(caller, packageInputOf(await createDtoOf(fields.metadata)));
        },
      });
      try {
        const dto = await createDtoOf(body.fields.metadata);
        if (body.file) {
          const { pkg, publisher, version } = await this.versions.createWithFirstVersion(
            caller,
            packageInputOf(dto),
            body,
            {
              version: dto.version,
              changelog: dto.changelog,
            },
          );
          return packageDetail(pkg, publisher, [version]);
        }
        const { pkg, publisher } = await this.packages.create(caller, packageInputOf(dto));
        return packageDetail(pkg, publisher, []);
      } finally {
        await body.cleanup();
      }
    }
    const dto = await validateAs(CreatePackageDto, request.body);
    if (dto.version !== undefined || dto.changelog !== undefined) {
      throw new PlatformError('UNPROCESSABLE_ENTITY', 'version and changelog belong to a multipart create with a file');
    }
    const { pkg, publisher } = await this.packages.create(caller, packageInputOf(dto));
    return packageDetail(pkg, publisher, []);
  }

  /**
   * The registry's hottest read (every client update check). A public package's view is the same for every caller,
   * so it is cached as its JSON text: a cached answer neither resolves the caller (for a signed-in caller, a
   * publisher query) nor serialises the view again. The text is exactly what `res.json` would write, with the same
   * Content-Type.
   */
  @Get(':name')
  @Public()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'Package detail with its versions' })
  @ApiOkResponse({ type: PackageDetailDto })
  @ApiErrors({ 404: 'Unknown, or not visible to the caller' })
  async detail(@Req() request: AuthenticatedRequest, @Param('name') name: string): Promise<string> {
    const cached = this.viewCache.get(name.toLowerCase()) as string | undefined;
    if (cached !== undefined) return cached;
    const snapshot = this.viewCache.snapshot();
    const caller = await this.callers.of(request);
    const { pkg, publisher, versions } = await this.packages.detail(caller, name);
    const json = JSON.stringify(packageDetail(pkg, publisher, versions));
    if (pkg.visibility === 'public') this.viewCache.set(pkg.id, pkg.nameLower, json, snapshot);
    return json;
  }

  @Patch(':name')
  @Authenticated()
  @ApiOperation({ summary: "Update a package (owner's publisher or admin)" })
  @ApiOkResponse({ type: PackageDetailDto })
  @ApiErrors({
    403: "Not the owner's publisher nor an admin",
    404: 'Unknown, or not visible to the caller',
    422: 'Invalid field',
  })
  async update(@CurrentCaller() caller: Caller, @Param('name') name: string, @Body() body: UpdatePackageDto) {
    const { pkg } = await this.packages.update(caller, name, {
      displayName: body.display_name,
      description: body.description,
      visibility: body.visibility,
      homepage: body.homepage,
      repository: body.repository,
      license: body.license,
      keywords: body.keywords,
      readme: body.readme,
    });
    const { publisher, versions } = await this.packages.detail(caller, pkg.name);
    return packageDetail(pkg, publisher, versions);
  }

  @Delete(':name')
  @Authenticated({ admin: true })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a package, its versions and every stored file (admin)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({ 404: 'Unknown package' })
  async remove(@CurrentCaller() caller: Caller, @Param('name') name: string): Promise<void> {
    await this.packages.delete(caller, name);
  }
}

/** The `metadata` field of a multipart create, parsed and validated. */
async function createDtoOf(metadata: string | undefined): Promise<CreatePackageDto> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata ?? '');
  } catch {
    throw new PlatformError('UNPROCESSABLE_ENTITY', 'metadata must be a JSON object', [
      { field: 'metadata', message: 'must be JSON' },
    ]);
  }
  return validateAs(CreatePackageDto, parsed);
}
