import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PERMISSIONS } from '../../auth/permissions.js';

/** Response bodies of the MCP transport's REST door (the original's payloads). */

export class ServerInfoDto {
  @ApiProperty({ example: 'toolbox-mcp' }) name: string;
  @ApiProperty({ example: '0.1.0' }) version: string;
}

export class InitializeResponseDto {
  @ApiProperty({ description: 'Send back as Mcp-Session-Id; expires after the idle time' }) session_id: string;
  @ApiProperty({ example: '2025-11-25' }) protocol_version: string;
  @ApiProperty({ type: ServerInfoDto }) server_info: ServerInfoDto;
  @ApiProperty({ type: Object, example: { tools: { listChanged: true }, resources: {} } })
  capabilities: Record<string, unknown>;
  @ApiProperty({ enum: PERMISSIONS, isArray: true }) permissions: string[];
}

export class ToolDto {
  @ApiProperty({ example: 'core_ping' }) name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: Object, description: 'JSON Schema of the arguments' }) inputSchema: Record<string, unknown>;
}

export class ToolListDto {
  @ApiProperty({ type: ToolDto, isArray: true }) tools: ToolDto[];
}

export class TextContentDto {
  @ApiProperty({ enum: ['text'] }) type: 'text';
  @ApiProperty() text: string;
}

export class ToolCallResultDto {
  @ApiProperty({ type: TextContentDto, isArray: true }) content: TextContentDto[];
  @ApiProperty({ description: 'true when the tool failed (the HTTP status is still 200)' }) isError: boolean;
  @ApiPropertyOptional({ type: Object, description: 'The function Result (wire form) or the tool data' })
  structuredContent?: Record<string, unknown>;
}

export class ResourceDto {
  @ApiProperty({ example: 'toolbox://status' }) uri: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ example: 'application/json' }) mimeType: string;
}

export class ResourceListDto {
  @ApiProperty({ type: ResourceDto, isArray: true }) resources: ResourceDto[];
}

export class ResourceContentDto {
  @ApiProperty() uri: string;
  @ApiProperty() mimeType: string;
  @ApiProperty() text: string;
}

export class ResourceReadDto {
  @ApiProperty({ type: ResourceContentDto, isArray: true }) contents: ResourceContentDto[];
}

export class HealthDto {
  @ApiProperty({ example: 'healthy' }) status: string;
  @ApiProperty({ example: 'toolbox-mcp' }) server: string;
  @ApiProperty() version: string;
  @ApiProperty({ enum: ['http', 'stdio'] }) mode: string;
  @ApiProperty({ type: Number }) uptime_seconds: number;
  @ApiProperty() initialized: boolean;
}

export class PythonSandboxesDto {
  @ApiProperty({ type: Number, description: 'Interpreters loaded and waiting for a python_execute call' })
  ready: number;
  @ApiProperty({ type: Number, description: 'Interpreters loading' }) starting: number;
  @ApiProperty({ type: Number, description: 'Sandboxes running code' }) running: number;
}

export class StatusDto extends HealthDto {
  @ApiProperty({ type: Number }) request_count: number;
  @ApiProperty({ type: Number }) average_latency_ms: number;
  @ApiProperty({ type: Number }) error_count: number;
  @ApiProperty({ type: Number }) tool_calls: number;
  @ApiProperty({ type: Number }) tool_errors: number;
  @ApiProperty({ type: Number, description: 'Share of tool-catalogue lookups answered from the cache' })
  cache_hit_rate: number;
  @ApiProperty({ type: Number }) sessions: number;
  @ApiProperty({ type: Number }) tools: number;
  @ApiProperty({ type: PythonSandboxesDto, nullable: true, description: 'null when python_execute is off' })
  python_sandboxes: PythonSandboxesDto | null;
}

export class McpKeyDto {
  @ApiProperty() name: string;
  @ApiProperty({ example: 'tb_mcp_1a2b3c4d' }) key_prefix: string;
  @ApiProperty({ enum: PERMISSIONS, isArray: true }) permissions: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_used_at: string | null;
  @ApiProperty({ type: Number }) usage_count: number;
}

export class McpKeyListDto {
  @ApiProperty({ type: McpKeyDto, isArray: true }) keys: McpKeyDto[];
}

export class CreatedMcpKeyDto {
  @ApiProperty({ example: 'tb_mcp_0123456789abcdef0123456789abcdef', description: 'Shown once' }) api_key: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: PERMISSIONS, isArray: true }) permissions: string[];
  @ApiProperty() warning: string;
}

export class RevokedMcpKeyDto {
  @ApiProperty() revoked: string;
}

export class JsonRpcErrorDto {
  @ApiProperty({ type: Number, example: -32602 }) code: number;
  @ApiProperty() message: string;
}

export class JsonRpcResponseDto {
  @ApiProperty({ enum: ['2.0'] }) jsonrpc: '2.0';
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }], nullable: true }) id: string | number | null;
  @ApiPropertyOptional({ type: Object, description: 'The method result (InitializeResult, ListToolsResult, …)' })
  result?: Record<string, unknown>;
  @ApiPropertyOptional({ type: JsonRpcErrorDto }) error?: JsonRpcErrorDto;
}
