import { VERIFICATION_STATUSES } from '../registry/index.js';
import { ADMIN_ACTIONS, isAdminAction, nextStatus, SUBMITTABLE_STATUSES } from './publisher-transitions.js';

describe('publisher transitions', () => {
  it.each([
    ['verify', 'pending', 'verified'],
    ['verify', 'unverified', 'verified'],
    ['verify', 'rejected', 'verified'],
    ['reject', 'pending', 'rejected'],
    ['revoke', 'verified', 'unverified'],
    ['suspend', 'unverified', 'suspended'],
    ['suspend', 'pending', 'suspended'],
    ['suspend', 'verified', 'suspended'],
    ['suspend', 'rejected', 'suspended'],
    ['unsuspend', 'suspended', 'unverified'],
  ] as const)('allows %s from %s to %s', (action, from, to) => {
    expect(nextStatus(action, from)).toBe(to);
  });

  it.each([
    ['verify', 'verified'],
    ['verify', 'suspended'],
    ['reject', 'unverified'],
    ['reject', 'verified'],
    ['reject', 'rejected'],
    ['reject', 'suspended'],
    ['revoke', 'unverified'],
    ['revoke', 'pending'],
    ['revoke', 'rejected'],
    ['revoke', 'suspended'],
    ['suspend', 'suspended'],
    ['unsuspend', 'unverified'],
    ['unsuspend', 'pending'],
    ['unsuspend', 'verified'],
    ['unsuspend', 'rejected'],
  ] as const)('refuses %s from %s', (action, from) => {
    expect(nextStatus(action, from)).toBeNull();
  });

  it('leaves every status with a way out except through the allowed actions', () => {
    const reachable = VERIFICATION_STATUSES.map(
      (status) => ADMIN_ACTIONS.filter((action) => nextStatus(action, status) !== null).length,
    );
    expect(reachable.every((count) => count > 0)).toBe(true);
  });

  it('lets a request be submitted only when unverified or rejected', () => {
    expect([...SUBMITTABLE_STATUSES].sort()).toEqual(['rejected', 'unverified']);
  });

  it('recognises the admin actions and nothing else', () => {
    expect(isAdminAction('revoke')).toBe(true);
    expect(isAdminAction('delete')).toBe(false);
  });
});
