import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** The model gateway's users, keys, usage rows, balance transactions, signup requests and live voice sessions. */
export class GatewayAccounts1763800000900 implements MigrationInterface {
  name = 'GatewayAccounts1763800000900';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'gateway_users',
        columns: [
          column.id(),
          column.string('email', 191),
          column.string('tier', 8),
          column.bigint('balance_micros'),
          column.boolean('active', true),
          column.timestamp('created_at'),
        ],
        indices: [new TableIndex({ name: 'uq_gateway_users_email', columnNames: ['email'], isUnique: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gateway_api_keys',
        columns: [
          column.id(),
          column.string('user_id', 36),
          column.string('name', 100),
          column.string('key_hash', 64),
          column.string('key_prefix', 16),
          column.timestamp('created_at'),
          column.nullableTimestamp('revoked_at'),
        ],
        indices: [
          // Every request looks its key up by hash.
          new TableIndex({ name: 'uq_gateway_api_keys_key_hash', columnNames: ['key_hash'], isUnique: true }),
          new TableIndex({ name: 'ix_gateway_api_keys_user', columnNames: ['user_id'] }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gateway_usage',
        columns: [
          column.id(),
          column.nullableString('user_id', 36),
          column.nullableString('key_id', 36),
          column.string('endpoint', 64),
          column.string('model', 191),
          column.integer('prompt_tokens'),
          column.integer('completion_tokens'),
          column.bigint('cost_micros'),
          column.integer('latency_ms'),
          column.integer('status'),
          column.timestamp('created_at'),
        ],
        indices: [new TableIndex({ name: 'ix_gateway_usage_user_time', columnNames: ['user_id', 'created_at'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gateway_transactions',
        columns: [
          column.id(),
          column.string('user_id', 36),
          column.string('kind', 16),
          column.bigint('amount_micros'),
          column.nullableString('usage_id', 36),
          column.nullableString('note', 255),
          column.timestamp('created_at'),
        ],
        indices: [
          new TableIndex({ name: 'ix_gateway_transactions_user_time', columnNames: ['user_id', 'created_at'] }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gateway_signup_requests',
        columns: [
          column.id(),
          column.string('email', 191),
          column.nullableString('note', 500),
          column.string('status', 16),
          column.nullableString('user_id', 36),
          column.timestamp('created_at'),
          column.nullableTimestamp('decided_at'),
        ],
        indices: [new TableIndex({ name: 'ix_gateway_signup_requests_status', columnNames: ['status', 'created_at'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gateway_live_sessions',
        columns: [
          column.string('token_hash', 64, { isPrimary: true }),
          column.nullableString('user_id', 36),
          column.nullableString('key_id', 36),
          column.string('tier', 8),
          column.text('config', { isNullable: false }),
          column.text('history', { isNullable: false }),
          column.timestamp('created_at'),
          column.timestamp('expires_at'),
          column.nullableTimestamp('closed_at'),
        ],
        indices: [new TableIndex({ name: 'ix_gateway_live_sessions_user', columnNames: ['user_id', 'expires_at'] })],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'gateway_signup_requests',
      'gateway_transactions',
      'gateway_usage',
      'gateway_api_keys',
      'gateway_users',
    ]) {
      await queryRunner.dropTable(table, true);
    }
  }
}
