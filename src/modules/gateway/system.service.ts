import { execFile } from 'node:child_process';
import { cpus, freemem, loadavg, totalmem, uptime } from 'node:os';
import { promisify } from 'node:util';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { MoreThanOrEqual, type Repository } from 'typeorm';
import { MeteringService } from './accounts/metering.service.js';
import { GatewayUsageEntity } from './entities/gateway-usage.entity.js';
import { GatewaySettingsService } from './gateway-settings.service.js';

const run = promisify(execFile);
const startedAt = new Date();

export interface GpuInfo {
  name: string;
  memory_total_mb: number;
  memory_used_mb: number;
  utilization_percent: number;
}

/** NVIDIA GPUs through nvidia-smi when it is installed; an empty list otherwise (CPU-only hosts, other vendors). */
async function gpus(): Promise<GpuInfo[]> {
  try {
    const { stdout } = await run(
      'nvidia-smi',
      ['--query-gpu=name,memory.total,memory.used,utilization.gpu', '--format=csv,noheader,nounits'],
      { timeout: 2000 },
    );
    return stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, total, used, utilization] = line.split(',').map((part) => part.trim());
        return {
          name,
          memory_total_mb: Number(total),
          memory_used_mb: Number(used),
          utilization_percent: Number(utilization),
        };
      });
  } catch {
    return [];
  }
}

/** `/admin/api/system`, `/api/uptime`: the host, the runtime and the request rates (from the usage rows, so every process counts). */
@Injectable()
export class SystemService {
  constructor(
    private readonly gateway: GatewaySettingsService,
    @InjectRepository(GatewayUsageEntity) private readonly usage: Repository<GatewayUsageEntity>,
    private readonly metering: MeteringService,
  ) {}

  async runtime() {
    const version = await this.gateway.client.version();
    const running = version === null ? [] : await this.gateway.client.running().catch(() => []);
    return {
      url: this.gateway.ollamaUrl,
      reachable: version !== null,
      version,
      backend_mode: this.gateway.settings.backend_mode,
      loaded_models: running.map((model) => model.name),
    };
  }

  async uptime() {
    return {
      started_at: startedAt.toISOString(),
      uptime_seconds: Math.floor((Date.now() - startedAt.getTime()) / 1000),
      runtime_reachable: (await this.gateway.client.version()) !== null,
    };
  }

  async system() {
    await this.metering.flush();
    const now = Date.now();
    const [lastMinute, lastHour, gpuList, runtime] = await Promise.all([
      this.usage.count({ where: { createdAt: MoreThanOrEqual(new Date(now - 60_000)) } }),
      this.usage.count({ where: { createdAt: MoreThanOrEqual(new Date(now - 3_600_000)) } }),
      gpus(),
      this.runtime(),
    ]);
    const memory = process.memoryUsage();
    return {
      cpu: { cores: cpus().length, model: cpus()[0]?.model ?? null, load_average: loadavg() },
      memory: { total_bytes: totalmem(), free_bytes: freemem(), process_rss_bytes: memory.rss },
      gpus: gpuList,
      runtime,
      requests: { last_minute: lastMinute, last_hour: lastHour },
      host_uptime_seconds: Math.floor(uptime()),
      gateway: { started_at: startedAt.toISOString(), pid: process.pid, node: process.version },
    };
  }
}
