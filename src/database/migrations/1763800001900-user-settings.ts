import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** A user's `settings` and per-module `mod_data` (JSON objects the original web client reads and saves). */
export class UserSettings1763800001900 implements MigrationInterface {
  name = 'UserSettings1763800001900';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.addColumn('platform_users', new TableColumn(column.text('settings', { isNullable: true })));
    await queryRunner.addColumn('platform_users', new TableColumn(column.text('mod_data', { isNullable: true })));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('platform_users', 'mod_data');
    await queryRunner.dropColumn('platform_users', 'settings');
  }
}
