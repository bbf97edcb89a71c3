import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** The tier a signup request asks for (`{email, tier, message}` of the original gateway's clients). */
export class GatewaySignupTier1763800001890 implements MigrationInterface {
  name = 'GatewaySignupTier1763800001890';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.addColumn('gateway_signup_requests', new TableColumn(column.nullableString('requested_tier', 8)));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('gateway_signup_requests', 'requested_tier');
  }
}
