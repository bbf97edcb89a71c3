import type { VerificationStatus } from '../registry/index.js';

export const ADMIN_ACTIONS = ['verify', 'reject', 'revoke', 'suspend', 'unsuspend'] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

export interface Transition {
  from: readonly VerificationStatus[];
  to: VerificationStatus;
}

/**
 * The publisher verification state machine, written out here because the original never specified it. A publisher
 * enters `pending` only through its own verification request (see SUBMITTABLE_STATUSES).
 */
export const TRANSITIONS: Record<AdminAction, Transition> = {
  verify: { from: ['pending', 'unverified', 'rejected'], to: 'verified' },
  reject: { from: ['pending'], to: 'rejected' },
  revoke: { from: ['verified'], to: 'unverified' },
  suspend: { from: ['unverified', 'pending', 'verified', 'rejected'], to: 'suspended' },
  unsuspend: { from: ['suspended'], to: 'unverified' },
};

/** A verification request may be submitted from these; verified and pending are refused, never downgraded. */
export const SUBMITTABLE_STATUSES: readonly VerificationStatus[] = ['unverified', 'rejected'];

/** The status `action` leads to from `current`, or null when the transition is not allowed. */
export function nextStatus(action: AdminAction, current: VerificationStatus): VerificationStatus | null {
  const transition = TRANSITIONS[action];
  return transition.from.includes(current) ? transition.to : null;
}

export function isAdminAction(value: string): value is AdminAction {
  return (ADMIN_ACTIONS as readonly string[]).includes(value);
}
