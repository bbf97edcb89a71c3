import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import {
  HEALTH_CHECKS,
  HealthController,
  LIVENESS_DETAILS,
  ReadinessController,
  type LivenessDetails,
} from './health.controller.js';
import { BUILT_IN_CHECKS, type BuiltInCheckName, type ReadinessCheck } from './readiness-checks.js';

export interface HealthOptions {
  /** What readiness tests, in order: built-in names (`database`, `storage`, `queue`, `redis`) or the service's own checks. */
  checks: Array<BuiltInCheckName | ReadinessCheck>;
  /** `false`: serve `/ready` only, the service answers `/health` itself (default true). */
  liveness?: boolean;
  /** Fields the service adds to its `/health` answer (from memory: liveness never waits on a dependency). */
  livenessDetails?: LivenessDetails;
}

/** `/health` (liveness) and `/ready` (the service's dependencies), plus their `/api/v1/…` aliases. */
@Module({})
export class HealthModule {
  static forRoot(options: HealthOptions): DynamicModule {
    const checks = options.checks.map((check) => (typeof check === 'string' ? BUILT_IN_CHECKS[check] : check));
    return {
      module: HealthModule,
      imports: [TerminusModule],
      controllers: [options.liveness === false ? ReadinessController : HealthController],
      providers: [
        { provide: HEALTH_CHECKS, useValue: checks },
        { provide: LIVENESS_DETAILS, useValue: options.livenessDetails ?? null },
      ],
    };
  }
}
