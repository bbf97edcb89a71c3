import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * The gateway's balances become a ledger: a user's open holds are kept beside the balance
 * (`gateway_users.held_micros`), every ledger row records what it did to both (`gateway_transactions.held_micros`),
 * and a usage row says whether its call was billed (`gateway_usage.billed`; failed calls are kept, unbilled).
 */
export class GatewayLedger1763800001920 implements MigrationInterface {
  name = 'GatewayLedger1763800001920';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.addColumn('gateway_users', new TableColumn(column.bigint('held_micros')));
    await queryRunner.addColumn('gateway_transactions', new TableColumn(column.bigint('held_micros')));
    await queryRunner.addColumn('gateway_usage', new TableColumn(column.boolean('billed', true)));
    // Before the ledger a failed call's row was told apart only by its status (a cut stream, 499, was billed).
    await queryRunner.query('UPDATE gateway_usage SET billed = 0 WHERE status >= 400 AND status <> 499');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('gateway_usage', 'billed');
    await queryRunner.dropColumn('gateway_transactions', 'held_micros');
    await queryRunner.dropColumn('gateway_users', 'held_micros');
  }
}
