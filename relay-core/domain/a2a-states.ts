// How each thread status reads as an A2A task state, in v1.0 (tasks, streams, push notifications) and in v0.3.
import type { ThreadStatus } from './schemas';

export const A2A_V1_STATE: Record<ThreadStatus, string> = {
  pending: 'TASK_STATE_SUBMITTED',
  accepted: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  declined: 'TASK_STATE_REJECTED',
  cancelled: 'TASK_STATE_CANCELED',
  // A2A has no "unassigned" state: an unclaimed handoff is submitted, and metadata.handoff says who may claim it.
  unclaimed: 'TASK_STATE_SUBMITTED',
  // Nobody acted in time (docs/lifecycle.md); A2A has no "expired", and the task ended without being worked.
  expired: 'TASK_STATE_CANCELED',
  // A create held for approval waits for a person's authorisation; a rejected one is refused for good.
  awaiting_approval: 'TASK_STATE_AUTH_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
};

export const A2A_V03_STATE: Record<ThreadStatus, string> = {
  pending: 'submitted',
  accepted: 'working',
  completed: 'completed',
  declined: 'rejected',
  cancelled: 'canceled',
  unclaimed: 'submitted',
  expired: 'canceled',
  awaiting_approval: 'auth-required',
  rejected: 'rejected',
};
