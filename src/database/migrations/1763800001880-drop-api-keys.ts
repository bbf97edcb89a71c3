import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ApiKeys1763800000800 } from './1763800000800-api-keys.js';

/**
 * Drops the generic `api_keys` table: no service ever wrote a row to it. Every service authenticates through the
 * one AuthGuard now, each kind of key with its own strategy over the table of the product that owns it: MCP keys
 * (`mcp_api_keys`: operator keys named globally, revoked by deletion, with usage counts) and the gateway's
 * (`gateway_api_keys`: keys of billed users). A shared table would have had to invent owners and levels for the
 * one and billing for the other.
 */
export class DropApiKeys1763800001880 implements MigrationInterface {
  name = 'DropApiKeys1763800001880';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_keys', true);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await new ApiKeys1763800000800().up(queryRunner);
  }
}
