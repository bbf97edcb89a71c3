import type { Repository } from 'typeorm';
import type { McpKeyEntity } from './mcp-key.entity.js';
import { hashMcpKey, McpKeysService } from './mcp-keys.service.js';

/** A key table of one row whose usage UPDATEs finish only when the test lets them. */
function keyTable(key: string) {
  const row = {
    name: 'counted',
    keyHash: hashMcpKey(key),
    keyPrefix: key.slice(0, 11),
    permissions: ['read'],
    createdAt: new Date(),
    lastUsedAt: null as Date | null,
    usageCount: 0,
  };
  const held: Array<() => void> = [];
  const repository = {
    findOne: async () => row,
    find: async () => [{ ...row }],
    createQueryBuilder: () => {
      let increment = 0;
      const builder = {
        update: () => builder,
        set: (values: { usageCount: () => string }) => {
          increment = Number(/\+ (\d+)$/.exec(values.usageCount())![1]);
          return builder;
        },
        where: () => builder,
        execute: () =>
          new Promise<void>((resolve) =>
            held.push(() => {
              row.usageCount += increment;
              resolve();
            }),
          ),
      };
      return builder;
    },
  };
  return { repository: repository as unknown as Repository<McpKeyEntity>, held };
}

describe('McpKeysService usage counts', () => {
  const key = `tb_mcp_${'a'.repeat(32)}`;

  it('lists the counts of a flush that was already under way when the listing began', async () => {
    const { repository, held } = keyTable(key);
    const service = new McpKeysService(repository);
    await service.verify(key);
    await service.verify(key);
    const timerFlush = service.flushUsage(); // the timer's flush: its UPDATE is in flight
    await service.verify(key);
    let listed: Awaited<ReturnType<McpKeysService['list']>> | undefined;
    const listing = service.list().then((keys) => (listed = keys));
    // The newest UPDATE commits first (another pooled connection), the timer's last.
    while (listed === undefined) {
      await new Promise((resolve) => setImmediate(resolve));
      held.pop()?.();
    }
    await listing;
    await timerFlush;
    expect(listed[0].usage_count).toBe(3);
  });
});
