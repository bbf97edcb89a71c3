import { hasPermission, isPermission } from './permissions.js';

describe('hasPermission', () => {
  it('grants a permission the key holds', () => {
    expect(hasPermission(['read', 'execute'], 'execute')).toBe(true);
  });

  it('refuses a permission the key lacks', () => {
    expect(hasPermission(['read', 'write'], 'execute')).toBe(false);
  });

  it('refuses everything to a key without permissions', () => {
    expect(['read', 'write', 'execute', 'admin'].some((need) => hasPermission([], need as never))).toBe(false);
  });

  it('lets admin imply read, write and execute', () => {
    expect(['read', 'write', 'execute', 'admin'].every((need) => hasPermission(['admin'], need as never))).toBe(true);
  });

  it('does not let execute imply admin', () => {
    expect(hasPermission(['read', 'write', 'execute'], 'admin')).toBe(false);
  });

  it('knows exactly the four seed permissions', () => {
    expect(['read', 'write', 'execute', 'admin', 'Admin', 'delete', 1].map(isPermission)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});
